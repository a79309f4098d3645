// @ts-check
/**
 * The parts every redrawn chart shares, as SVG elements made one by one: the canvas with its
 * title, the axes with ticks, grid and labels, and the legend. Every word on a chart comes from the
 * sandbox, so it only ever goes in as text (textContent), never as markup; attribute values are
 * numbers we computed or our own constants.
 */

const SVG_NS = "http://www.w3.org/2000/svg";

export const WIDTH = 560;
export const HEIGHT = 340;
/** The plot area inside the canvas: room for the title and the legend above, tick labels and axis labels around. */
export const PLOT = { left: 64, right: WIDTH - 16, top: 52, bottom: HEIGHT - 52 };
/** Where the legend's row is, between the title and the plot. */
const LEGEND_Y = 38;
/** Series colours, in order (a tenth series takes the first colour again). */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
/** Longest label drawn whole, and longest name in a legend; longer ones end in an ellipsis. */
const MAX_LABEL = 48;
const MAX_LEGEND_NAME = 24;

/** @param {number} index */
export function colorOf(index) {
  return PALETTE[index % PALETTE.length] ?? "#888";
}

/**
 * Text safe to show and short enough to fit. Exponents written as matplotlib's tick labels write
 * them (`10^{-2}`) become superscripts (10⁻²).
 * @param {unknown} value
 */
export function labelOf(value) {
  const raw = typeof value === "string" ? value : typeof value === "number" && Number.isFinite(value) ? String(value) : "";
  const text = raw.replace(/\^\{([-−+]?\d+)\}/g, (_, digits) => [...digits].map((c) => SUPERSCRIPTS[c] ?? c).join(""));
  return text.length > MAX_LABEL ? `${text.slice(0, MAX_LABEL - 1)}…` : text;
}

/** @type {Record<string, string>} */
const SUPERSCRIPTS = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻", "−": "⁻", "+": "⁺" };

/**
 * An SVG element with these attributes and, optionally, text.
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {string} [text]
 * @returns {SVGElement}
 */
export function svgElement(tag, attributes = {}, text) {
  const element = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, typeof value === "number" ? String(Math.round(value * 100) / 100) : value);
  if (text !== undefined) element.textContent = text;
  return element;
}

/**
 * A mark with what it shows as its tooltip (an SVG <title>, text only).
 * @template {SVGElement} T
 * @param {T} mark
 * @param {string} text
 * @returns {T}
 */
export function withTip(mark, text) {
  mark.append(svgElement("title", {}, text));
  return mark;
}

/**
 * An empty chart canvas with its title; `kind` names the chart type for tests and styling.
 * @param {string} kind
 * @param {unknown} title
 */
export function chartCanvas(kind, title) {
  const name = labelOf(title);
  const svg = svgElement("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: "img", class: "chart", "data-chart": kind });
  svg.setAttribute("aria-label", name === "" ? `${kind} chart` : name);
  if (name !== "") svg.append(svgElement("text", { x: WIDTH / 2, y: 22, "text-anchor": "middle", class: "chart-title" }, name));
  return svg;
}

/**
 * Both axes with their ticks, grid lines and labels, around the plot area.
 * @param {SVGElement} svg
 * @param {{ at: (value: number) => number, ticks: { value: number, label: string }[] }} x
 * @param {{ at: (value: number) => number, ticks: { value: number, label: string }[] }} y
 * @param {{ xLabel?: unknown, yLabel?: unknown }} [labels]
 */
export function drawAxes(svg, x, y, labels = {}) {
  const axes = svgElement("g", { class: "chart-axes" });
  for (const tick of y.ticks) {
    const at = y.at(tick.value);
    if (!(at >= PLOT.top - 0.5 && at <= PLOT.bottom + 0.5)) continue;
    axes.append(svgElement("line", { x1: PLOT.left, x2: PLOT.right, y1: at, y2: at, class: "chart-grid" }));
    axes.append(svgElement("text", { x: PLOT.left - 6, y: at + 4, "text-anchor": "end" }, labelOf(tick.label)));
  }
  const every = Math.max(1, Math.ceil(x.ticks.length / 12));
  x.ticks.forEach((tick, i) => {
    const at = x.at(tick.value);
    if (i % every !== 0 || !(at >= PLOT.left - 0.5 && at <= PLOT.right + 0.5)) return;
    axes.append(svgElement("line", { x1: at, x2: at, y1: PLOT.bottom, y2: PLOT.bottom + 5, class: "chart-axis" }));
    // A label at the right edge ends there rather than running off the canvas.
    axes.append(svgElement("text", { x: at, y: PLOT.bottom + 18, "text-anchor": at > PLOT.right - 40 ? "end" : "middle" }, labelOf(tick.label)));
  });
  axes.append(svgElement("line", { x1: PLOT.left, x2: PLOT.right, y1: PLOT.bottom, y2: PLOT.bottom, class: "chart-axis" }));
  axes.append(svgElement("line", { x1: PLOT.left, x2: PLOT.left, y1: PLOT.top, y2: PLOT.bottom, class: "chart-axis" }));
  const xLabel = labelOf(labels.xLabel);
  if (xLabel) axes.append(svgElement("text", { x: (PLOT.left + PLOT.right) / 2, y: HEIGHT - 14, "text-anchor": "middle", class: "chart-label" }, xLabel));
  const yLabel = labelOf(labels.yLabel);
  const middle = (PLOT.top + PLOT.bottom) / 2;
  if (yLabel) axes.append(svgElement("text", { x: 14, y: middle, "text-anchor": "middle", transform: `rotate(-90 14 ${middle})`, class: "chart-label" }, yLabel));
  svg.append(axes);
}

/**
 * A legend in one row between the title and the plot, one swatch per named series, as many as fit
 * (an ellipsis says some did not).
 * @param {SVGElement} svg
 * @param {string[]} names
 */
export function drawLegend(svg, names) {
  if (names.length === 0 || (names.length === 1 && names[0] === "")) return;
  const legend = svgElement("g", { class: "chart-legend" });
  let x = PLOT.left;
  for (const [i, full] of names.entries()) {
    const name = full.length > MAX_LEGEND_NAME ? `${full.slice(0, MAX_LEGEND_NAME - 1)}…` : full;
    const width = 18 + name.length * 6.5 + 12;
    if (x + width > PLOT.right) {
      legend.append(svgElement("text", { x, y: LEGEND_Y + 4 }, "…"));
      break;
    }
    legend.append(svgElement("rect", { x, y: LEGEND_Y - 5, width: 10, height: 10, fill: colorOf(i) }));
    legend.append(svgElement("text", { x: x + 14, y: LEGEND_Y + 4 }, name));
    x += width;
  }
  svg.append(legend);
}
