// @ts-check
/**
 * One result of a cell (a MIME bundle: text, html, markdown, svg, png, jpeg, json, latex,
 * javascript, and chart data when the figure has it) shown in its richest form, with buttons to
 * see its other forms. A bundle comes from the sandbox and is hostile: images only ever as data
 * URLs of an <img> (an SVG as an image runs no script), HTML rebuilt from an inert parse, markdown
 * and everything else as text. JavaScript output is shown, never run.
 */
import { chartView } from "./chart-view.js";
import { markdownView } from "./markdown-view.js";
import { safeHtml } from "./safe-html.js";

/**
 * The forms a result can be shown in, richest first: the first one the bundle has (and can be
 * drawn: a chart of a type this page does not draw falls through to the figure's image) is shown.
 * @type {[format: string, view: (value: any) => HTMLElement | undefined][]}
 */
const VIEWS = [
  ["chart", (chart) => chartView(chart)],
  ["html", (html) => (typeof html === "string" ? safeHtml(html) : undefined)],
  ["markdown", (markdown) => (typeof markdown === "string" ? markdownView(markdown) : undefined)],
  ["png", (data) => imageView("image/png", data)],
  ["jpeg", (data) => imageView("image/jpeg", data)],
  ["svg", (svg) => (typeof svg === "string" ? imageView("image/svg+xml", utf8Base64(svg)) : undefined)],
  ["json", (json) => textView(JSON.stringify(json, null, 2) ?? "")],
  ["latex", (latex) => (typeof latex === "string" ? textView(latex) : undefined)],
  ["javascript", (code) => (typeof code === "string" ? textView(code, "JavaScript output (shown, not run)") : undefined)],
  ["text", (text) => (typeof text === "string" ? textView(text) : undefined)],
];

/**
 * @param {Record<string, unknown>} result
 * @returns {HTMLElement} a `div.result` (with `data-format` saying which form is shown)
 */
export function resultView(result) {
  const box = document.createElement("div");
  box.className = "result";
  /** @type {[string, HTMLElement][]} */
  const forms = [];
  for (const [format, view] of VIEWS) {
    if (result[format] === undefined || result[format] === null) continue;
    const element = view(result[format]);
    if (element) forms.push([format, element]);
  }
  if (forms.length === 0) return box;
  const body = document.createElement("div");
  const show = (/** @type {number} */ index) => {
    const [format, element] = /** @type {[string, HTMLElement]} */ (forms[index]);
    box.dataset.format = format;
    body.replaceChildren(element);
    for (const [i, button] of switches.entries()) button.setAttribute("aria-pressed", String(i === index));
  };
  const switches = forms.length < 2 ? [] : forms.map(([format], index) => {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: format, className: "format" });
    button.dataset.format = format;
    button.addEventListener("click", () => show(index));
    return button;
  });
  if (switches.length > 0) {
    const bar = document.createElement("div");
    bar.className = "formats";
    bar.append(...switches);
    box.append(bar);
  }
  box.append(body);
  show(0);
  return box;
}

/** An image from base64 data, or undefined when the data is not base64. @param {string} mimeType @param {unknown} data */
function imageView(mimeType, data) {
  if (typeof data !== "string" || !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(data)) return undefined;
  const image = document.createElement("img");
  image.alt = `${mimeType} result`;
  image.src = `data:${mimeType};base64,${data.replace(/\s+/g, "")}`;
  return image;
}

/** @param {string} text @param {string} [note] */
function textView(text, note) {
  const pre = document.createElement("pre");
  pre.className = "result-text";
  if (note) pre.title = note;
  pre.textContent = text;
  return pre;
}

/** @param {string} text */
function utf8Base64(text) {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
