// @ts-check
/**
 * Markdown from a sandbox (display(Markdown(...)), `_repr_markdown_`), drawn with the common
 * blocks (headings, paragraphs, lists, fenced code, quotes, rules) and inline marks (code, bold,
 * italic, links shown as their text). Every piece becomes an element we make with its text as text:
 * HTML written inside the markdown shows as the characters it is, never as markup.
 */

/**
 * @param {string} markdown
 * @returns {HTMLElement} a `div.markdown-output`
 */
export function markdownView(markdown) {
  const out = document.createElement("div");
  out.className = "markdown-output";
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  /** @type {HTMLElement | undefined} the list being filled */
  let list;
  /** @type {string[]} lines of the paragraph being gathered */
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length > 0) out.append(withInline("p", paragraph.join(" ")));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = /^\s*(```|~~~)/.exec(line);
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$/.exec(line);
    if (!item) list = undefined;
    if (fence) {
      endParagraph();
      const code = [];
      while (++i < lines.length && !(lines[i] ?? "").trimStart().startsWith(fence[1] ?? "```")) code.push(lines[i]);
      out.append(Object.assign(document.createElement("pre"), { textContent: code.join("\n") }));
    } else if (heading) {
      endParagraph();
      out.append(withInline(`h${(heading[1] ?? "#").length}`, heading[2] ?? ""));
    } else if (item) {
      endParagraph();
      const tag = item[1] === undefined ? "ul" : "ol";
      if (!list || list.localName !== tag) out.append((list = document.createElement(tag)));
      list.append(withInline("li", item[2] ?? ""));
    } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      endParagraph();
      out.append(document.createElement("hr"));
    } else if (/^\s*>/.test(line)) {
      endParagraph();
      out.append(withInline("blockquote", line.replace(/^\s*>\s?/, "")));
    } else if (line.trim() === "") endParagraph();
    else paragraph.push(line.trim());
  }
  endParagraph();
  return out;
}

/** An element holding a line of markdown's inline marks. @param {string} tag @param {string} text */
function withInline(tag, text) {
  const element = document.createElement(tag);
  const marks = /(`[^`]+`|\*\*[^*]+\*\*|__[^_]+__|\*[^*\s][^*]*\*|\[[^\]]+\]\([^)\s]*\))/g;
  let at = 0;
  for (const match of text.matchAll(marks)) {
    element.append(text.slice(at, match.index));
    element.append(markOf(match[0]));
    at = match.index + match[0].length;
  }
  element.append(text.slice(at));
  return element;
}

/** @param {string} token */
function markOf(token) {
  if (token.startsWith("`")) return Object.assign(document.createElement("code"), { textContent: token.slice(1, -1) });
  if (token.startsWith("**") || token.startsWith("__")) return Object.assign(document.createElement("strong"), { textContent: token.slice(2, -2) });
  if (token.startsWith("[")) return token.slice(1, token.indexOf("]("));
  return Object.assign(document.createElement("em"), { textContent: token.slice(1, -1) });
}
