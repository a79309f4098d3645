/**
 * Charts as data: the structure of a matplotlib figure, sent beside its PNG as a result's `chart`,
 * so a front end can redraw it natively instead of showing pixels. The container's Python reads it
 * from the figure's artists (lines, scatter collections, bar containers, wedges, a boxplot's lines),
 * never from the image.
 *
 * One chart per axes: `line`, `scatter`, `bar`, `pie`, `box_and_whisker`, or `unknown` when the axes
 * holds something that does not map cleanly (an image, a mesh, bars and lines together) or the
 * reading failed; a figure of several axes is a `superchart` whose elements are the charts. The type
 * names and element fields are those E2B's code interpreter uses, so front ends written for it read
 * ours; what we add (element kinds, bar positions and bases, error bars, areas, outliers, means,
 * ticks, orientation, an unknown chart's reason) is extra fields they may ignore.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

export const CHART_TYPES = ["line", "scatter", "bar", "pie", "box_and_whisker", "superchart", "unknown"] as const;
export type ChartType = (typeof CHART_TYPES)[number];

/** How an axis maps values: matplotlib's scale names, plus `datetime` and `categorical` for date and string data. */
export const CHART_SCALES = ["linear", "log", "symlog", "logit", "asinh", "function", "functionlog", "datetime", "categorical", "unknown"] as const;

/**
 * The variable a cell (or a context, or the sandbox) sets to `off` to get figures as PNG alone,
 * without their chart: what a cell that draws many figures and never redraws them may want.
 */
export const CHART_DATA_ENV = "SANDBOX_CHART_DATA";

/** A coordinate: a number, an ISO 8601 time on a date axis, a category's name on a categorical one; null for a gap (NaN). */
const coordinateSchema = lazySchema(() => z.union([z.number(), z.string()]).nullable());
const pointSchema = lazySchema(() => z.tuple([coordinateSchema, coordinateSchema]));
/** An error bar's ends, in data values: [low, high]. */
const rangeSchema = lazySchema(() => z.tuple([z.number(), z.number()]));

const scaleSchema = lazySchema(() => z.enum(CHART_SCALES));

/** What every chart has. */
const chartBase = lazySchema(() => z.object({
  /** The axes' title (for a superchart, the figure's suptitle); null when it has none. */
  title: z.string().nullable(),
}));

/** What a chart on x and y axes has. Labels are null when unset; a unit is what the label gives in "(…)" or "[…]". */
const axesFields = lazySchema(() => z.object({
  x_label: z.string().nullable(),
  y_label: z.string().nullable(),
  x_unit: z.string().optional(),
  y_unit: z.string().optional(),
  x_scale: scaleSchema,
  y_scale: scaleSchema,
  /** The major ticks as drawn, with their labels. */
  x_ticks: z.array(coordinateSchema),
  x_tick_labels: z.array(z.string()),
  y_ticks: z.array(coordinateSchema),
  y_tick_labels: z.array(z.string()),
}));

export const pointElementSchema = lazySchema(() => z.object({
  /**
   * `line` (plot, step, errorbar), `scatter` (scatter, or plot with markers and no line), `area`
   * (fill_between, stackplot: `points` is the upper edge, `baseline` the lower).
   */
  kind: z.enum(["line", "scatter", "area"]),
  /** The legend's label, or "Line 1", "Series 1", "Area 1" … for unlabelled ones. */
  label: z.string(),
  points: z.array(pointSchema),
  baseline: z.array(pointSchema).optional(),
  /** Error bars, one [low, high] per point (errorbar's xerr and yerr), null where a point has none. */
  x_errors: z.array(rangeSchema.nullable()).optional(),
  y_errors: z.array(rangeSchema.nullable()).optional(),
}));

export const barElementSchema = lazySchema(() => z.object({
  /** The bar's category (its tick label), else its position as text. */
  label: z.string(),
  /** The series: the bar call's label, or "Group 1", "Group 2" … */
  group: z.string(),
  /** Length of the bar along the value axis. */
  value: z.number(),
  /** Centre of the bar on the category axis (a histogram bin's centre), and its extent there. */
  position: coordinateSchema,
  width: z.number(),
  /** Where the bar starts on the value axis: 0, or the top of the bar below it when stacked. */
  base: z.number(),
  /** Error bar ends on the value axis. */
  error: rangeSchema.optional(),
}));

export const pieElementSchema = lazySchema(() => z.object({
  /** The wedge's label, or "Slice 1" … */
  label: z.string(),
  /** Degrees of the circle the wedge takes. */
  angle: z.number(),
  /** Share of the whole circle, angle / 360. */
  fraction: z.number(),
  radius: z.number(),
}));

export const boxElementSchema = lazySchema(() => z.object({
  /** The box's tick label, else its position as text. */
  label: z.string(),
  position: z.number(),
  /** Whisker ends and quartiles, as drawn. */
  min: z.number(),
  first_quartile: z.number(),
  median: z.number(),
  third_quartile: z.number(),
  max: z.number(),
  outliers: z.array(z.number()),
  /** When the boxplot shows means. */
  mean: z.number().optional(),
}));

const orientationSchema = lazySchema(() => z.enum(["vertical", "horizontal"]));

export const lineChartSchema = lazySchema(() => z.object({ type: z.literal("line"), ...chartBase.shape, ...axesFields.shape, elements: z.array(pointElementSchema) }));
export const scatterChartSchema = lazySchema(() => z.object({ type: z.literal("scatter"), ...chartBase.shape, ...axesFields.shape, elements: z.array(pointElementSchema) }));
export const barChartSchema = lazySchema(() => z.object({
  type: z.literal("bar"),
  ...chartBase.shape,
  ...axesFields.shape,
  /** vertical: categories along x, values up y; horizontal (barh): categories along y. Axis fields keep their own axis. */
  orientation: orientationSchema,
  elements: z.array(barElementSchema),
}));
export const pieChartSchema = lazySchema(() => z.object({ type: z.literal("pie"), ...chartBase.shape, elements: z.array(pieElementSchema) }));
export const boxChartSchema = lazySchema(() => z.object({
  type: z.literal("box_and_whisker"),
  ...chartBase.shape,
  ...axesFields.shape,
  orientation: orientationSchema,
  elements: z.array(boxElementSchema),
}));
export const unknownChartSchema = lazySchema(() => z.object({
  type: z.literal("unknown"),
  ...chartBase.shape,
  elements: z.array(z.unknown()).length(0),
  /** Why this axes is not charted: what it holds that does not map, or what failed. */
  reason: z.string(),
}));

/** The chart of one axes. */
export const axesChartSchema = lazySchema(() => z.discriminatedUnion("type", [lineChartSchema, scatterChartSchema, barChartSchema, pieChartSchema, boxChartSchema, unknownChartSchema]));
export type AxesChart = z.infer<typeof axesChartSchema>;

/** Several axes in one figure (subplots, twin axes), in the figure's order. */
export const superChartSchema = lazySchema(() => z.object({ type: z.literal("superchart"), ...chartBase.shape, elements: z.array(axesChartSchema) }));

/** A result's `chart`: a figure of one axes is that axes' chart. */
export const chartSchema = lazySchema(() => z.discriminatedUnion("type", [lineChartSchema, scatterChartSchema, barChartSchema, pieChartSchema, boxChartSchema, unknownChartSchema, superChartSchema]));
export type Chart = z.infer<typeof chartSchema>;
