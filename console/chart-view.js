// @ts-check
/**
 * A cell's chart redrawn from its data, as SVG in the page: line, scatter, bar, pie and
 * box-and-whisker charts, and a superchart of those (a figure's several axes). The data's shape is
 * E2B's code interpreter's (`{type, title, x_label, y_label, elements, …}`); the fields the service
 * adds are used where they make the drawing truer. A chart this page cannot draw (an unknown type,
 * a scale it does not draw, no usable data, a superchart with such a part) gives undefined, and the
 * result shows the figure's image instead. The data is hostile: bounded, checked value by value,
 * and its words go in as text only.
 */
import { barChart, boxChart, isRecord, listOf, pointChart } from "./chart-cartesian.js";
import { numberOf } from "./chart-scales.js";
import { PLOT, chartCanvas, colorOf, labelOf, svgElement, withTip } from "./chart-svg.js";

/** Bounds on what one chart draws: past them the rest is left out. */
const MAX_SLICES = 1_000;
const MAX_SUBCHARTS = 16;
/** Slices named in a pie's legend; the rest are drawn, unnamed. */
const MAX_PIE_LEGEND = 14;

/**
 * @param {unknown} chart a result's `chart`
 * @returns {HTMLElement | undefined} a `figure.chart`
 */
export function chartView(chart) {
  if (!isRecord(chart)) return undefined;
  const parts = chart.type === "superchart" ? listOf(chart.elements, MAX_SUBCHARTS).map((part) => (isRecord(part) ? drawChart(part) : undefined)) : [drawChart(chart)];
  if (parts.length === 0 || parts.some((part) => part === undefined)) return undefined;
  const figure = document.createElement("figure");
  figure.className = chart.type === "superchart" ? "chart superchart" : "chart";
  const title = labelOf(chart.title);
  if (chart.type === "superchart" && title) figure.append(Object.assign(document.createElement("figcaption"), { textContent: title }));
  figure.append(.../** @type {SVGElement[]} */ (parts));
  return figure;
}

/** @param {Record<string, unknown>} chart @returns {SVGElement | undefined} */
function drawChart(chart) {
  switch (chart.type) {
    case "line":
    case "scatter":
      return pointChart(chart, chart.type);
    case "bar":
      return barChart(chart);
    case "pie":
      return pieChart(chart);
    case "box_and_whisker":
      return boxChart(chart);
    default:
      return undefined;
  }
}

/**
 * Slices in the order given, counterclockwise from three o'clock as matplotlib draws them by
 * default; `angle` is a slice's degrees of the circle.
 * @param {Record<string, unknown>} chart
 */
function pieChart(chart) {
  const slices = listOf(chart.elements, MAX_SLICES)
    .filter(isRecord)
    .flatMap((slice) => {
      const angle = numberOf(slice.angle);
      return angle === undefined || angle <= 0 ? [] : [{ label: labelOf(slice.label), angle, radius: numberOf(slice.radius) ?? 1 }];
    });
  if (slices.length === 0) return undefined;
  const circle = Math.max(360, slices.reduce((sum, slice) => sum + slice.angle, 0));
  const maxRadius = Math.max(...slices.map((slice) => slice.radius), Number.EPSILON);
  const full = (PLOT.bottom - PLOT.top) / 2;
  const center = { x: PLOT.left + full, y: (PLOT.top + PLOT.bottom) / 2 + 8 };
  const svg = chartCanvas("pie", chart.title);
  let start = 0;
  slices.forEach((slice, i) => {
    const sweep = (slice.angle / circle) * 2 * Math.PI;
    const r = full * Math.max(0.1, Math.min(1, slice.radius / maxRadius));
    const at = (/** @type {number} */ angle) => `${round(center.x + r * Math.cos(angle))} ${round(center.y - r * Math.sin(angle))}`;
    const shape =
      sweep >= 2 * Math.PI - 1e-9
        ? svgElement("circle", { cx: center.x, cy: center.y, r, fill: colorOf(i) })
        : svgElement("path", { d: `M ${round(center.x)} ${round(center.y)} L ${at(start)} A ${round(r)} ${round(r)} 0 ${sweep > Math.PI ? 1 : 0} 0 ${at(start + sweep)} Z`, fill: colorOf(i) });
    shape.setAttribute("class", "chart-slice");
    svg.append(withTip(shape, `${slice.label}: ${Math.round((slice.angle / circle) * 1000) / 10}%`));
    start += sweep;
  });
  const legend = svgElement("g", { class: "chart-legend" });
  slices.slice(0, MAX_PIE_LEGEND).forEach((slice, i) => {
    const y = PLOT.top + 8 + i * 17;
    const share = `${Math.round((slice.angle / circle) * 1000) / 10}%`;
    legend.append(svgElement("rect", { x: center.x + full + 40, y: y - 9, width: 10, height: 10, fill: colorOf(i) }));
    legend.append(svgElement("text", { x: center.x + full + 56, y }, `${slice.label} (${share})`));
  });
  svg.append(legend);
  return svg;
}

/** @param {number} value */
function round(value) {
  return Math.round(value * 100) / 100;
}
