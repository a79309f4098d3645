// @ts-check
/**
 * A cell's chart redrawn from its data, as SVG in the page: line, scatter, bar, pie and box (and
 * a superchart of those). The data's shape is the one E2B's code interpreter gives: `{type, title,
 * x_label, y_label, elements}`, with points `[x, y]` for line and scatter, `{label, value, group}`
 * bars, `{label, angle, radius}` slices and `{label, min, first_quartile, median, third_quartile,
 * max, outliers}` boxes. A chart this page cannot draw (an unknown type, no usable data) gives
 * undefined, and the result shows its image instead. The data is hostile: bounded, checked value
 * by value, and its words go in as text only.
 */
import { bandScale, continuousScale, givenTicks, numberOf } from "./chart-scales.js";
import { PLOT, chartCanvas, colorOf, drawAxes, drawLegend, labelOf, svgElement } from "./chart-svg.js";

/** Bounds on what one chart draws: past them the rest is left out. */
const MAX_SERIES = 64;
const MAX_POINTS = 10_000;
const MAX_ITEMS = 1_000;
const MAX_SUBCHARTS = 16;

/**
 * @param {unknown} chart
 * @returns {HTMLElement | undefined}
 */
export function chartView(chart) {
  if (!isRecord(chart)) return undefined;
  if (chart.type === "superchart") return superchart(chart);
  const svg = drawChart(chart);
  if (!svg) return undefined;
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.append(svg);
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

/** Several charts under one title (E2B lists them as `elements`; older shapes as `data`). @param {Record<string, unknown>} chart */
function superchart(chart) {
  const parts = listOf(chart.elements ?? chart.data, MAX_SUBCHARTS).filter(isRecord).map(drawChart).filter((svg) => svg !== undefined);
  if (parts.length === 0) return undefined;
  const figure = document.createElement("figure");
  figure.className = "chart superchart";
  const title = labelOf(chart.title);
  if (title) figure.append(Object.assign(document.createElement("figcaption"), { textContent: title }));
  figure.append(...parts);
  return figure;
}

/** @param {Record<string, unknown>} chart @param {"line" | "scatter"} kind */
function pointChart(chart, kind) {
  const series = listOf(chart.elements, MAX_SERIES)
    .filter(isRecord)
    .map((element) => ({ label: labelOf(element.label), points: listOf(element.points, MAX_POINTS).filter(isPair) }));
  const xAxis = axisOf(series.flatMap((s) => s.points.map((p) => p[0])), chart.x_scale);
  const points = series.map((s) => s.points.flatMap((p) => {
    const x = xAxis.valueOf(p[0]);
    const y = numberOf(p[1]);
    return x === undefined || y === undefined ? [] : [{ x, y }];
  }));
  if (points.every((list) => list.length === 0)) return undefined;
  const x = xAxis.scale(PLOT.left, PLOT.right, givenTicks(xAxis.kind === "number" ? chart.x_ticks : [], chart.x_tick_labels));
  const y = continuousScale(points.flat().map((p) => p.y), PLOT.bottom, PLOT.top, { log: chart.y_scale === "log", ticks: givenTicks(chart.y_ticks, chart.y_tick_labels) });
  const svg = chartCanvas(kind, chart.title);
  drawAxes(svg, x, y, { xLabel: chart.x_label, yLabel: chart.y_label });
  points.forEach((list, i) => {
    const group = svgElement("g", { class: "chart-series", "data-series": i });
    if (kind === "line") group.append(svgElement("polyline", { points: list.map((p) => `${round(x.at(p.x))},${round(y.at(p.y))}`).join(" "), fill: "none", stroke: colorOf(i), "stroke-width": 2 }));
    else for (const p of list) group.append(svgElement("circle", { cx: x.at(p.x), cy: y.at(p.y), r: 3, fill: colorOf(i) }));
    svg.append(group);
  });
  drawLegend(svg, series.length > 1 ? series.map((s) => legendName(s.label)) : []);
  return svg;
}

/**
 * How an x axis reads its values: numbers, dates (ISO strings, as a datetime scale sends them), or
 * categories in the order first seen.
 * @param {unknown[]} raw
 * @param {unknown} scaleName
 */
function axisOf(raw, scaleName) {
  if (raw.length > 0 && raw.every((value) => numberOf(value) !== undefined))
    return { kind: "number", valueOf: numberOf, scale: (/** @type {number} */ from, /** @type {number} */ to, /** @type {{value: number, label: string}[]} */ ticks) => continuousScale(raw.map((v) => numberOf(v) ?? 0), from, to, { log: scaleName === "log", ticks }) };
  const dates = scaleName === "datetime" || raw.every((value) => typeof value === "string" && /^\d{4}-\d\d-\d\d/.test(value));
  if (dates) {
    const timeOf = (/** @type {unknown} */ value) => (typeof value === "string" ? numberOf(Date.parse(value)) : undefined);
    return {
      kind: "date",
      valueOf: timeOf,
      scale: (/** @type {number} */ from, /** @type {number} */ to) => {
        const scale = continuousScale(raw.flatMap((v) => timeOf(v) ?? []), from, to);
        return { ...scale, ticks: scale.ticks.map((tick) => ({ value: tick.value, label: dateLabel(tick.value) })) };
      },
    };
  }
  const names = raw.map((value) => labelOf(value));
  return {
    kind: "category",
    valueOf: (/** @type {unknown} */ value) => names.indexOf(labelOf(value)),
    scale: (/** @type {number} */ from, /** @type {number} */ to) => {
      const bands = bandScale(names, from, to);
      return { at: (/** @type {number} */ index) => bands.at(names[index] ?? ""), ticks: bands.ticks.map((tick) => ({ value: names.indexOf(tick.label), label: tick.label })) };
    },
  };
}

/** @param {Record<string, unknown>} chart */
function barChart(chart) {
  const bars = listOf(chart.elements, MAX_ITEMS)
    .filter(isRecord)
    .flatMap((bar) => {
      const value = numberOf(bar.value);
      return value === undefined ? [] : [{ label: labelOf(bar.label), group: labelOf(bar.group), value }];
    });
  if (bars.length === 0) return undefined;
  const x = bandScale(bars.map((bar) => bar.label), PLOT.left, PLOT.right);
  const groups = [...new Set(bars.map((bar) => bar.group))];
  const y = continuousScale(bars.map((bar) => bar.value), PLOT.bottom, PLOT.top, { includeZero: true });
  const svg = chartCanvas("bar", chart.title);
  drawAxes(svg, { at: (name) => x.at(name), ticks: x.names.map((name) => ({ value: name, label: name })) }, y, { xLabel: chart.x_label, yLabel: chart.y_label });
  const barWidth = (x.width * 0.8) / groups.length;
  const series = groups.map((_, i) => svgElement("g", { class: "chart-series", "data-series": i }));
  for (const bar of bars) {
    const g = groups.indexOf(bar.group);
    const left = x.at(bar.label) - x.width * 0.4 + g * barWidth;
    const top = Math.min(y.at(bar.value), y.at(0));
    series[g]?.append(svgElement("rect", { x: left, y: top, width: Math.max(1, barWidth - 1), height: Math.abs(y.at(bar.value) - y.at(0)), fill: colorOf(g) }));
  }
  svg.append(...series);
  drawLegend(svg, groups.length > 1 ? groups.map(legendName) : []);
  return svg;
}

/** Slices in the order given, clockwise from twelve o'clock; `angle` is a slice's share of 360 degrees. @param {Record<string, unknown>} chart */
function pieChart(chart) {
  const slices = listOf(chart.elements, MAX_ITEMS)
    .filter(isRecord)
    .flatMap((slice) => {
      const angle = numberOf(slice.angle);
      return angle === undefined || angle <= 0 ? [] : [{ label: labelOf(slice.label), angle, radius: numberOf(slice.radius) ?? 1 }];
    });
  if (slices.length === 0) return undefined;
  const total = slices.reduce((sum, slice) => sum + slice.angle, 0);
  const maxRadius = Math.max(...slices.map((slice) => slice.radius), Number.EPSILON);
  const center = { x: PLOT.left + (PLOT.bottom - PLOT.top) / 2, y: (PLOT.top + PLOT.bottom) / 2 + 8 };
  const full = (PLOT.bottom - PLOT.top) / 2;
  const svg = chartCanvas("pie", chart.title);
  let start = 0;
  slices.forEach((slice, i) => {
    const sweep = (slice.angle / Math.max(total, 360)) * 2 * Math.PI;
    const r = full * Math.max(0.1, Math.min(1, slice.radius / maxRadius));
    const point = (/** @type {number} */ angle) => `${round(center.x + r * Math.sin(angle))} ${round(center.y - r * Math.cos(angle))}`;
    const shape =
      sweep >= 2 * Math.PI - 1e-9
        ? svgElement("circle", { cx: center.x, cy: center.y, r, fill: colorOf(i) })
        : svgElement("path", { d: `M ${round(center.x)} ${round(center.y)} L ${point(start)} A ${round(r)} ${round(r)} 0 ${sweep > Math.PI ? 1 : 0} 1 ${point(start + sweep)} Z`, fill: colorOf(i) });
    shape.setAttribute("class", "chart-slice");
    svg.append(shape);
    start += sweep;
  });
  const legend = svgElement("g", { class: "chart-legend" });
  slices.slice(0, 14).forEach((slice, i) => {
    const y = PLOT.top + 8 + i * 17;
    const share = `${Math.round((slice.angle / Math.max(total, 360)) * 1000) / 10}%`;
    legend.append(svgElement("rect", { x: center.x + full + 40, y: y - 9, width: 10, height: 10, fill: colorOf(i) }));
    legend.append(svgElement("text", { x: center.x + full + 56, y }, `${legendName(slice.label)} (${share})`));
  });
  svg.append(legend);
  return svg;
}

/** @param {Record<string, unknown>} chart */
function boxChart(chart) {
  const boxes = listOf(chart.elements, MAX_ITEMS)
    .filter(isRecord)
    .flatMap((box) => {
      const [min, q1, median, q3, max] = [box.min, box.first_quartile, box.median, box.third_quartile, box.max].map(numberOf);
      if (min === undefined || q1 === undefined || median === undefined || q3 === undefined || max === undefined) return [];
      const outliers = listOf(box.outliers, MAX_POINTS).flatMap((value) => numberOf(value) ?? []);
      return [{ label: labelOf(box.label), min, q1, median, q3, max, outliers }];
    });
  if (boxes.length === 0) return undefined;
  const x = bandScale(boxes.map((box) => box.label), PLOT.left, PLOT.right);
  const y = continuousScale(boxes.flatMap((box) => [box.min, box.max, ...box.outliers]), PLOT.bottom, PLOT.top);
  const svg = chartCanvas("box_and_whisker", chart.title);
  drawAxes(svg, { at: (name) => x.at(name), ticks: x.names.map((name) => ({ value: name, label: name })) }, y, { xLabel: chart.x_label, yLabel: chart.y_label });
  boxes.forEach((box, i) => {
    const middle = x.at(box.label);
    const half = Math.min(40, x.width * 0.3);
    const group = svgElement("g", { class: "chart-box", "data-series": i, stroke: colorOf(0), fill: "none" });
    group.append(
      svgElement("line", { x1: middle, x2: middle, y1: y.at(box.min), y2: y.at(box.q1) }),
      svgElement("line", { x1: middle, x2: middle, y1: y.at(box.q3), y2: y.at(box.max) }),
      svgElement("line", { x1: middle - half / 2, x2: middle + half / 2, y1: y.at(box.min), y2: y.at(box.min) }),
      svgElement("line", { x1: middle - half / 2, x2: middle + half / 2, y1: y.at(box.max), y2: y.at(box.max) }),
      svgElement("rect", { x: middle - half, y: y.at(box.q3), width: half * 2, height: Math.abs(y.at(box.q1) - y.at(box.q3)), fill: "rgba(78,121,167,0.2)" }),
      svgElement("line", { x1: middle - half, x2: middle + half, y1: y.at(box.median), y2: y.at(box.median), "stroke-width": 2, class: "chart-median" }),
    );
    for (const outlier of box.outliers) group.append(svgElement("circle", { cx: middle, cy: y.at(outlier), r: 2.5, class: "chart-outlier" }));
    svg.append(group);
  });
  return svg;
}

/** A point: `[x, y]`. @param {unknown} value @returns {value is unknown[]} */
function isPair(value) {
  return Array.isArray(value) && value.length >= 2;
}

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** At most `max` items of a list; nothing for a value that is not one. @param {unknown} value @param {number} max @returns {unknown[]} */
function listOf(value, max) {
  return Array.isArray(value) ? value.slice(0, max) : [];
}

/** @param {string} name */
function legendName(name) {
  return name.length > 24 ? `${name.slice(0, 23)}…` : name;
}

/** A date tick's label: the day, and the time of day when it has one. @param {number} time */
function dateLabel(time) {
  const iso = new Date(time).toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso.slice(0, 16).replace("T", " ");
}

/** @param {number} value */
function round(value) {
  return Math.round(value * 100) / 100;
}
