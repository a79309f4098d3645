// @ts-check
/**
 * HTML from a sandbox (a DataFrame's table, display(HTML(...))) shown in the console's own page,
 * which holds the API token: the HTML is parsed into an inert document (DOMParser's: no script
 * runs, nothing loads), then rebuilt element by element from a short list of structural tags,
 * carrying over text and only the attributes a table needs (colspan, rowspan). Nothing parsed is
 * ever put in the page itself, so no handler, link, image, style or script can come along: what is
 * not on the list is left out, its text kept, and what can only be code (script, style, …) goes
 * with its text.
 */

/** Tags rebuilt as they are: tables and the text structure around them. */
const KEPT_TAGS = new Set([
  "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col",
  "div", "span", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
  "b", "strong", "i", "em", "u", "s", "sub", "sup", "small", "mark",
  "code", "pre", "kbd", "samp", "blockquote", "ul", "ol", "li", "dl", "dt", "dd",
]);
/** Tags whose text is code or chrome, not content: dropped whole. */
const DROPPED_TAGS = new Set(["script", "style", "template", "noscript", "iframe", "object", "embed", "svg", "math", "head", "title", "textarea", "select", "button"]);
/** Attributes carried over, each a small whole number. */
const KEPT_ATTRIBUTES = ["colspan", "rowspan"];
/** Past this many elements, or this deep, the rest is left out (a note says so). */
const MAX_ELEMENTS = 20_000;
const MAX_DEPTH = 48;

/**
 * @param {string} html
 * @returns {HTMLElement} a `div.html-output` holding the rebuilt content
 */
export function safeHtml(html) {
  const inert = new DOMParser().parseFromString(html, "text/html");
  const out = document.createElement("div");
  out.className = "html-output";
  const budget = { elements: MAX_ELEMENTS, cut: false };
  copyChildren(inert.body, out, 0, budget);
  if (budget.cut) out.append(Object.assign(document.createElement("p"), { className: "note", textContent: "[the rest of this HTML is left out: too large or too deep]" }));
  return out;
}

/**
 * @param {Node} from a node of the inert document
 * @param {Node} to a node of the page
 * @param {number} depth
 * @param {{ elements: number, cut: boolean }} budget
 */
function copyChildren(from, to, depth, budget) {
  for (const child of from.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) {
      to.appendChild(document.createTextNode(child.textContent ?? ""));
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const element = /** @type {Element} */ (child);
    const tag = element.localName;
    if (DROPPED_TAGS.has(tag) || element.namespaceURI !== "http://www.w3.org/1999/xhtml") continue;
    if (depth >= MAX_DEPTH || budget.elements <= 0) {
      budget.cut = true;
      return;
    }
    if (!KEPT_TAGS.has(tag)) {
      copyChildren(element, to, depth + 1, budget);
      continue;
    }
    budget.elements--;
    const copy = document.createElement(tag);
    for (const name of KEPT_ATTRIBUTES) {
      const value = element.getAttribute(name);
      if (value !== null && /^[1-9][0-9]{0,2}$/.test(value)) copy.setAttribute(name, value);
    }
    copyChildren(element, copy, depth + 1, budget);
    to.appendChild(copy);
  }
}
