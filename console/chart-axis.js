// @ts-check
/**
 * One axis of a redrawn chart, from the coordinates the data gives on it: numbers, dates (ISO 8601
 * strings, as a date axis sends them) or category names (in the order of the axis's own ticks,
 * then of first appearance, each at a whole-number position as matplotlib places them). The axis
 * turns each coordinate into a number and makes the scale from there to pixels, with the chart's
 * own ticks when it sent them. On an axis of numbers, a coordinate that is not one is a gap.
 */
import { continuousScale, formatTick, numberOf } from "./chart-scales.js";
import { labelOf } from "./chart-svg.js";

/** Axis scales a chart is redrawn on; others (symlog, logit, function, …) keep the figure's image. */
const DRAWN_SCALES = new Set(["linear", "log", "datetime", "categorical"]);

/** @param {unknown} scale an axis's `x_scale` or `y_scale`; absent (E2B's older charts) reads as linear */
export function drawnScale(scale) {
  return scale === undefined || scale === null || (typeof scale === "string" && DRAWN_SCALES.has(scale));
}

/**
 * @typedef {{
 *   kind: "number" | "date" | "category",
 *   valueOf: (coordinate: unknown) => number | undefined,
 *   scale: (from: number, to: number, extra?: number[]) => import("./chart-scales.js").Scale,
 * }} Axis `extra`: more values the scale must take in (bar edges)
 */

/**
 * @param {unknown[]} coordinates every coordinate the data has on this axis (nulls are gaps)
 * @param {unknown} scaleName
 * @param {unknown} tickValues the chart's `x_ticks` or `y_ticks`
 * @param {unknown} tickLabels
 * @returns {Axis}
 */
export function axisOf(coordinates, scaleName, tickValues, tickLabels) {
  const present = coordinates.filter((value) => value !== null && value !== undefined);
  const ticks = Array.isArray(tickValues) ? tickValues : [];
  const labels = Array.isArray(tickLabels) ? tickLabels : [];
  const labelAt = (/** @type {number} */ i, /** @type {string} */ fallback) => (typeof labels[i] === "string" && labels[i] !== "" ? labelOf(labels[i]) : fallback);

  const numbers = present.flatMap((value) => numberOf(value) ?? []);
  if (scaleName !== "categorical" && scaleName !== "datetime" && numbers.length > 0 && !present.every(isIsoDate)) {
    const values = numbers;
    const given = ticks.flatMap((raw, i) => {
      const value = numberOf(raw);
      return value === undefined ? [] : [{ value, label: labelAt(i, formatTick(value)) }];
    });
    return {
      kind: "number",
      valueOf: numberOf,
      scale: (from, to, extra = []) => continuousScale([...values, ...extra], from, to, { log: scaleName === "log", ticks: given }),
    };
  }

  if (scaleName === "datetime" || (present.length > 0 && present.every(isIsoDate))) {
    const timeOf = (/** @type {unknown} */ value) => (typeof value === "string" ? numberOf(Date.parse(inUtc(value))) : numberOf(value));
    const values = present.flatMap((value) => timeOf(value) ?? []);
    const given = ticks.flatMap((raw, i) => {
      const value = timeOf(raw);
      return value === undefined ? [] : [{ value, label: labelAt(i, dateLabel(value)) }];
    });
    return {
      kind: "date",
      valueOf: timeOf,
      scale: (from, to, extra = []) => {
        const all = [...values, ...extra];
        return continuousScale(all, from, to, { ticks: given.length > 0 ? given : dateTicks(Math.min(...all), Math.max(...all)) });
      },
    };
  }

  const names = [...new Set([...ticks.filter((tick) => typeof tick === "string"), ...present.map((value) => labelOf(value))])];
  const index = new Map(names.map((name, i) => [name, i]));
  const tickList = names.map((name, i) => ({ value: i, label: name }));
  return {
    kind: "category",
    valueOf: (value) => index.get(labelOf(value)),
    scale: (from, to, extra = []) => continuousScale([-0.5, names.length - 0.5, ...extra], from, to, { ticks: tickList, margin: 0 }),
  };
}

/** @param {unknown} value */
function isIsoDate(value) {
  return typeof value === "string" && /^\d{4}-\d\d-\d\d/.test(value);
}

/** A time without a zone is read as UTC, as the figure drew it, whatever the browser's zone. @param {string} text */
function inUtc(text) {
  return /T[\d:.]+$/.test(text) ? `${text}Z` : text;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Steps between date ticks, from a second to a year (months and years as about their length). */
const DATE_STEPS = [1000, 5000, 15_000, MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];

/** About five ticks over [min, max], on round times (UTC). @param {number} min @param {number} max */
function dateTicks(min, max) {
  if (!(max > min)) return Number.isFinite(min) ? [{ value: min, label: dateLabel(min) }] : [];
  const step = DATE_STEPS.find((s) => (max - min) / s <= 6) ?? 365 * DAY * Math.ceil((max - min) / (6 * 365 * DAY));
  const ticks = [];
  for (let value = Math.ceil(min / step) * step; value <= max; value += step) ticks.push({ value, label: dateLabel(value) });
  return ticks;
}

/** A date tick's label: the day, and the time of day when it has one. @param {number} time */
function dateLabel(time) {
  const iso = new Date(time).toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso.slice(0, 16).replace("T", " ");
}
