// @ts-check
/**
 * The arithmetic of a chart's axes: from data values to positions, and where ticks go with what
 * they say. A chart's data comes from a sandbox and is not trusted: values that are not finite
 * numbers are left out rather than drawn at NaN, and an axis over nothing still has a range.
 */

/**
 * @typedef {{
 *   at: (value: number) => number,
 *   ticks: { value: number, label: string }[],
 * }} Scale a position for each value, and the ticks to draw
 */

/** A number from a value the data calls a number ("3.5" included); undefined for anything else. @param {unknown} value */
export function numberOf(value) {
  const number = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
  return Number.isFinite(number) ? number : undefined;
}

/** Short label of a tick value: no float noise (0.30000000000000004), exponents for the very large and small. @param {number} value */
export function formatTick(value) {
  if (value === 0) return "0";
  const magnitude = Math.abs(value);
  if (magnitude >= 1e6 || magnitude < 1e-4) return value.toExponential(1).replace(/\.0e/, "e");
  return String(Number(value.toPrecision(6)));
}

/**
 * About `count` round tick values (1, 2 or 5 times a power of ten apart) covering [min, max].
 * @param {number} min @param {number} max @param {number} [count]
 */
export function niceTicks(min, max, count = 5) {
  if (min === max) return [min];
  const step = tickStep(min, max, count);
  const ticks = [];
  for (let value = Math.ceil(min / step) * step; value <= max + step * 1e-9; value += step) ticks.push(Number(value.toPrecision(12)));
  return ticks;
}

/** Ticks of a log axis over [min, max] (in powers of ten): the powers in view, or round values when fewer than two are. @param {number} min @param {number} max */
function logTicks(min, max) {
  const powers = [];
  for (let power = Math.ceil(min - 1e-9); power <= max + 1e-9; power++) powers.push(10 ** power);
  const values = powers.length >= 2 ? powers : niceTicks(10 ** min, 10 ** max).filter((value) => value > 0);
  return values.map((value) => ({ value, label: formatTick(value) }));
}

/** The room a figure leaves on each side of its data, as a share of the data's range. */
const DATA_MARGIN = 0.05;

/** The round distance between about `count` ticks over [min, max]. @param {number} min @param {number} max @param {number} count */
function tickStep(min, max, count) {
  const rough = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough;
}

/**
 * [min, max] widened to the round values around it, so that the data sits inside the plot, not on
 * its edges. @param {number} min @param {number} max @returns {[number, number]}
 */
function niceExtent(min, max) {
  const step = tickStep(min, max, 5);
  return [Math.floor(min / step) * step, Math.ceil(max / step) * step];
}

/**
 * [min, max] of some numbers, widened when they are all one value, [0, 1] when there are none.
 * @param {number[]} values
 * @returns {[number, number]}
 */
export function extentOf(values) {
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  if (min === Infinity) return [0, 1];
  if (min === max) return min === 0 ? [-1, 1] : [min - Math.abs(min) / 2, max + Math.abs(max) / 2];
  return [min, max];
}

/**
 * A linear (or, when asked and the values allow it, base-10 log) scale from the values' range onto
 * [from, to] pixels. With the chart's own ticks, the range is the data's with a margin on each side
 * (as the figure has it; none below a zero the bars stand on), and the ticks are those; without,
 * the range is widened to round values and ticks are computed.
 * @param {number[]} values
 * @param {number} from
 * @param {number} to
 * @param {{ log?: boolean, ticks?: { value: number, label: string }[], includeZero?: boolean, margin?: number }} [options]
 * @returns {Scale}
 */
export function continuousScale(values, from, to, options = {}) {
  const log = options.log === true && values.length > 0 && values.every((value) => value > 0);
  const mapped = log ? values.map(Math.log10) : values;
  let [min, max] = extentOf(options.includeZero ? [...mapped, 0] : mapped);
  const givenTicks = (options.ticks ?? []).filter((tick) => !log || tick.value > 0);
  if (givenTicks.length === 0) [min, max] = log ? [Math.floor(min), Math.ceil(max)] : niceExtent(min, max);
  else {
    const margin = (max - min) * (options.margin ?? DATA_MARGIN);
    [min, max] = [options.includeZero && min === 0 ? 0 : min - margin, max + margin];
  }
  const at = (/** @type {number} */ value) => from + (((log ? Math.log10(value) : value) - min) / (max - min)) * (to - from);
  const inView = givenTicks.filter((tick) => {
    const value = log ? Math.log10(tick.value) : tick.value;
    return value >= min - 1e-9 && value <= max + 1e-9;
  });
  // The figure's major ticks, unless fewer than two are in view (a log axis over less than a decade).
  const ticks = inView.length >= 2 ? givenTicks : log ? logTicks(min, max) : niceTicks(min, max).map((value) => ({ value, label: formatTick(value) }));
  return { at, ticks };
}

/**
 * The chart's own ticks for an axis (`x_ticks` with `x_tick_labels`), where they are numbers.
 * @param {unknown} values
 * @param {unknown} labels
 */
export function givenTicks(values, labels) {
  if (!Array.isArray(values)) return [];
  const names = Array.isArray(labels) ? labels : [];
  return values.flatMap((raw, i) => {
    const value = numberOf(raw);
    return value === undefined ? [] : [{ value, label: typeof names[i] === "string" && names[i] !== "" ? names[i] : formatTick(value) }];
  });
}
