// @ts-check
/**
 * Charts on two axes, redrawn as SVG: line and scatter charts (each element a line, a scatter or
 * an area, with its error bars), bars (grouped, stacked, histograms, horizontal) and boxes. The
 * shapes are E2B's, and the fields we add are used when there: a bar's position, width and base, a
 * box's position, an element's kind, an axis's scale and ticks, the orientation. A chart that cannot
 * be drawn faithfully (a scale drawn differently, no usable data) gives undefined: the figure's
 * image shows instead. Every value is checked as it is read; words go in as text only.
 */
import { axisOf, drawnScale } from "./chart-axis.js";
import { continuousScale, givenTicks, numberOf } from "./chart-scales.js";
import { PLOT, chartCanvas, colorOf, drawAxes, drawLegend, labelOf, svgElement, withTip } from "./chart-svg.js";

/** Bounds on what one chart draws: past them the rest is left out. */
const MAX_SERIES = 64;
const MAX_POINTS = 10_000;
const MAX_ITEMS = 2_000;
/** Width of a bar (of all a category's bars together) and of a box, in category steps, when the data does not say. */
const BAR_WIDTH = 0.8;
const BOX_WIDTH = 0.5;

/** @param {Record<string, unknown>} chart @param {"line" | "scatter"} type */
export function pointChart(chart, type) {
  if (!drawnScale(chart.x_scale) || !drawnScale(chart.y_scale)) return undefined;
  const elements = listOf(chart.elements, MAX_SERIES)
    .filter(isRecord)
    .map((element) => ({
      kind: element.kind === "line" || element.kind === "scatter" || element.kind === "area" ? element.kind : type,
      label: labelOf(element.label),
      points: listOf(element.points, MAX_POINTS).filter(isPair),
      baseline: listOf(element.baseline, MAX_POINTS).filter(isPair),
      yErrors: listOf(element.y_errors, MAX_POINTS),
    }));
  const all = elements.flatMap((element) => [...element.points, ...element.baseline]);
  const errorEnds = elements.flatMap((element) => element.yErrors.filter(isPair).flat());
  const xAxis = axisOf(all.map((p) => p[0]), chart.x_scale, chart.x_ticks, chart.x_tick_labels);
  const yAxis = axisOf([...all.map((p) => p[1]), ...errorEnds], chart.y_scale, chart.y_ticks, chart.y_tick_labels);
  /** @param {unknown[]} p @returns {{ x: number, y: number } | undefined} */
  const place = (p) => {
    const x = xAxis.valueOf(p[0]);
    const y = yAxis.valueOf(p[1]);
    return x === undefined || y === undefined ? undefined : { x, y };
  };
  if (!all.some((p) => place(p) !== undefined)) return undefined;
  const x = xAxis.scale(PLOT.left, PLOT.right);
  const y = yAxis.scale(PLOT.bottom, PLOT.top);
  const svg = chartCanvas(type, chart.title);
  drawAxes(svg, x, y, { xLabel: chart.x_label, yLabel: chart.y_label });
  const xy = (/** @type {{ x: number, y: number }} */ p) => `${round(x.at(p.x))},${round(y.at(p.y))}`;
  elements.forEach((element, i) => {
    const group = svgElement("g", { class: "chart-series", "data-kind": element.kind, "data-series": i });
    const points = element.points.map(place);
    if (element.kind === "line") {
      for (const run of runsOf(points)) group.append(withTip(svgElement("polyline", { points: run.map(xy).join(" "), fill: "none", stroke: colorOf(i), "stroke-width": 2 }), element.label));
    } else if (element.kind === "scatter") {
      element.points.forEach((raw, j) => {
        const p = points[j];
        if (p) group.append(withTip(svgElement("circle", { cx: x.at(p.x), cy: y.at(p.y), r: 3, fill: colorOf(i) }), `${element.label} (${labelOf(raw[0])}, ${labelOf(raw[1])})`));
      });
    } else {
      const upper = points.filter((p) => p !== undefined);
      const lower = element.baseline.map(place).filter((p) => p !== undefined).reverse();
      group.append(svgElement("polygon", { points: [...upper, ...lower].map(xy).join(" "), fill: colorOf(i), "fill-opacity": 0.35, stroke: colorOf(i) }));
    }
    element.yErrors.forEach((range, j) => {
      const p = points[j];
      const [low, high] = isPair(range) ? range.map(numberOf) : [];
      if (p && low !== undefined && high !== undefined) group.append(svgElement("line", { x1: x.at(p.x), x2: x.at(p.x), y1: y.at(low), y2: y.at(high), stroke: colorOf(i), class: "chart-error" }));
    });
    svg.append(group);
  });
  drawLegend(svg, elements.length > 1 ? elements.map((element) => element.label) : []);
  return svg;
}

/** @param {Record<string, unknown>} chart */
export function barChart(chart) {
  const frame = orientedFrame(chart);
  if (!frame) return undefined;
  const bars = listOf(chart.elements, MAX_ITEMS)
    .filter(isRecord)
    .flatMap((bar) => {
      const value = numberOf(bar.value);
      if (value === undefined) return [];
      const error = isPair(bar.error) ? bar.error.map(numberOf) : [];
      return [{ label: labelOf(bar.label), group: labelOf(bar.group), value, base: numberOf(bar.base) ?? 0, width: numberOf(bar.width), position: bar.position, error }];
    });
  if (bars.length === 0) return undefined;
  // Bars that say where they are stand there (histograms, grouped and stacked bars as drawn); bars that
  // do not stand side by side in their category, one slot per group.
  const placed = bars.every((bar) => bar.position !== undefined && bar.position !== null);
  const categories = frame.categoryAxis(placed ? bars.map((bar) => bar.position) : bars.map((bar) => bar.label));
  const groups = [...new Set(bars.map((bar) => bar.group))];
  /** @type {([number, number] | undefined)[]} */
  const spans = bars.map((bar) => {
    const at = categories.valueOf(placed ? bar.position : bar.label);
    if (at === undefined) return undefined;
    if (placed) {
      const width = bar.width ?? BAR_WIDTH;
      return [at - width / 2, at + width / 2];
    }
    const slot = BAR_WIDTH / groups.length;
    const left = at - BAR_WIDTH / 2 + groups.indexOf(bar.group) * slot;
    return [left, left + slot];
  });
  const values = bars.flatMap((bar) => [bar.base, bar.base + bar.value, ...bar.error.flatMap((end) => end ?? [])]);
  const draw = frame.draw("bar", categories, spans.flatMap((span) => span ?? []), values, true);
  const series = groups.map((_, i) => svgElement("g", { class: "chart-series", "data-series": i }));
  bars.forEach((bar, i) => {
    const span = spans[i];
    if (!span) return;
    const g = groups.indexOf(bar.group);
    const tip = `${bar.label}${groups.length > 1 ? ` · ${bar.group}` : ""}: ${bar.value}`;
    series[g]?.append(withTip(draw.rect(span[0], span[1], bar.base, bar.base + bar.value, { fill: colorOf(g) }), tip));
    const [low, high] = bar.error;
    const middle = (span[0] + span[1]) / 2;
    if (low !== undefined && high !== undefined) series[g]?.append(draw.line(middle, low, middle, high, { class: "chart-error", stroke: "currentColor" }));
  });
  draw.svg.append(...series);
  drawLegend(draw.svg, groups.length > 1 ? groups : []);
  return draw.svg;
}

/** @param {Record<string, unknown>} chart */
export function boxChart(chart) {
  const frame = orientedFrame(chart);
  if (!frame) return undefined;
  const boxes = listOf(chart.elements, MAX_ITEMS)
    .filter(isRecord)
    .flatMap((box) => {
      const [min, q1, median, q3, max] = [box.min, box.first_quartile, box.median, box.third_quartile, box.max].map(numberOf);
      if (min === undefined || q1 === undefined || median === undefined || q3 === undefined || max === undefined) return [];
      const outliers = listOf(box.outliers, MAX_POINTS).flatMap((value) => numberOf(value) ?? []);
      return [{ label: labelOf(box.label), position: numberOf(box.position), min, q1, median, q3, max, outliers, mean: numberOf(box.mean) }];
    });
  if (boxes.length === 0) return undefined;
  const placed = boxes.every((box) => box.position !== undefined);
  const categories = frame.categoryAxis(placed ? boxes.map((box) => box.position) : boxes.map((box) => box.label));
  const centers = boxes.map((box) => categories.valueOf(placed ? box.position : box.label));
  const edges = centers.flatMap((c) => (c === undefined ? [] : [c - BOX_WIDTH, c + BOX_WIDTH]));
  const draw = frame.draw("box_and_whisker", categories, edges, boxes.flatMap((box) => [box.min, box.max, ...box.outliers, ...(box.mean === undefined ? [] : [box.mean])]), false);
  boxes.forEach((box, i) => {
    const c = centers[i];
    if (c === undefined) return;
    const half = BOX_WIDTH / 2;
    const group = withTip(svgElement("g", { class: "chart-box", "data-series": i, stroke: colorOf(0) }), `${box.label}: ${box.min} · ${box.q1} · ${box.median} · ${box.q3} · ${box.max}`);
    group.append(
      draw.line(c, box.min, c, box.q1),
      draw.line(c, box.q3, c, box.max),
      draw.line(c - half / 2, box.min, c + half / 2, box.min),
      draw.line(c - half / 2, box.max, c + half / 2, box.max),
      draw.rect(c - half, c + half, box.q1, box.q3, { fill: colorOf(0), "fill-opacity": 0.2 }),
      draw.line(c - half, box.median, c + half, box.median, { "stroke-width": 2, class: "chart-median" }),
    );
    for (const outlier of box.outliers) group.append(draw.dot(c, outlier, { r: 2.5, fill: "none", class: "chart-outlier" }));
    if (box.mean !== undefined) group.append(draw.dot(c, box.mean, { r: 3, fill: colorOf(1), stroke: "none", class: "chart-mean" }));
    draw.svg.append(group);
  });
  return draw.svg;
}

/**
 * A bar or box chart's two axes: categories along x (vertical, the default) or along y
 * (horizontal), values along the other. The chart's axis fields keep their own axis either way.
 * @param {Record<string, unknown>} chart
 */
function orientedFrame(chart) {
  if (!drawnScale(chart.x_scale) || !drawnScale(chart.y_scale)) return undefined;
  const horizontal = chart.orientation === "horizontal";
  const [categoryName, valueName] = horizontal ? ["y", "x"] : ["x", "y"];
  return {
    /** @param {unknown[]} coordinates */
    categoryAxis: (coordinates) => axisOf(coordinates, chart[`${categoryName}_scale`], chart[`${categoryName}_ticks`], chart[`${categoryName}_tick_labels`]),
    /**
     * The canvas with both axes drawn, and how to draw in category and value coordinates.
     * @param {string} kind
     * @param {import("./chart-axis.js").Axis} categories
     * @param {number[]} categoryEdges
     * @param {number[]} values
     * @param {boolean} fromZero
     */
    draw(kind, categories, categoryEdges, values, fromZero) {
      const [categoryFrom, categoryTo, valueFrom, valueTo] = horizontal ? [PLOT.bottom, PLOT.top, PLOT.left, PLOT.right] : [PLOT.left, PLOT.right, PLOT.bottom, PLOT.top];
      const c = categories.scale(categoryFrom, categoryTo, categoryEdges);
      const log = chart[`${valueName}_scale`] === "log";
      const v = continuousScale(values, valueFrom, valueTo, { log, includeZero: fromZero && !log, ticks: givenTicks(chart[`${valueName}_ticks`], chart[`${valueName}_tick_labels`]) });
      // On a log axis a bar from 0 starts at the axis's end.
      const vAt = (/** @type {number} */ value) => (Number.isFinite(v.at(value)) ? v.at(value) : valueFrom);
      const point = (/** @type {number} */ cv, /** @type {number} */ vv) => (horizontal ? { x: vAt(vv), y: c.at(cv) } : { x: c.at(cv), y: vAt(vv) });
      const svg = chartCanvas(kind, chart.title);
      drawAxes(svg, horizontal ? v : c, horizontal ? c : v, { xLabel: chart.x_label, yLabel: chart.y_label });
      return {
        svg,
        /** @param {number} c0 @param {number} c1 @param {number} v0 @param {number} v1 @param {Record<string, string | number>} [attributes] */
        rect(c0, c1, v0, v1, attributes = {}) {
          const a = point(c0, v0);
          const b = point(c1, v1);
          return svgElement("rect", { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), width: Math.max(1, Math.abs(a.x - b.x)), height: Math.abs(a.y - b.y), ...attributes });
        },
        /** @param {number} c0 @param {number} v0 @param {number} c1 @param {number} v1 @param {Record<string, string | number>} [attributes] */
        line(c0, v0, c1, v1, attributes = {}) {
          const a = point(c0, v0);
          const b = point(c1, v1);
          return svgElement("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, ...attributes });
        },
        /** @param {number} cv @param {number} vv @param {Record<string, string | number>} [attributes] */
        dot(cv, vv, attributes = {}) {
          const a = point(cv, vv);
          return svgElement("circle", { cx: a.x, cy: a.y, ...attributes });
        },
      };
    },
  };
}

/** The stretches of a line between its gaps (a point that is not there breaks the line). @template T @param {(T | undefined)[]} points @returns {T[][]} */
function runsOf(points) {
  /** @type {T[][]} */
  const runs = [[]];
  for (const p of points) {
    if (p === undefined) runs.push([]);
    else runs.at(-1)?.push(p);
  }
  return runs.filter((run) => run.length > 0);
}

/** A point or a range: `[a, b]`. @param {unknown} value @returns {value is unknown[]} */
function isPair(value) {
  return Array.isArray(value) && value.length >= 2;
}

/** @param {unknown} value @returns {value is Record<string, unknown>} */
export function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** At most `max` items of a list; nothing for a value that is not one. @param {unknown} value @param {number} max @returns {unknown[]} */
export function listOf(value, max) {
  return Array.isArray(value) ? value.slice(0, max) : [];
}

/** @param {number} value */
function round(value) {
  return Math.round(value * 100) / 100;
}
