// @ts-check
/** Small DOM helpers the panels share. */

/**
 * The element with this id (the page has it: a missing one is a bug in index.html).
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @returns {T}
 */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return /** @type {T} */ (element);
}

/**
 * A new element with text or children; attributes set as properties-free attributes.
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {(Node | string)[]} children
 */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** Shows an error from any panel in the page's one error line; undefined hides it. @param {unknown} error */
export function showError(error) {
  const line = byId("error");
  if (error === undefined) {
    line.hidden = true;
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = error && typeof error === "object" && "code" in error ? `${error.code}: ` : "";
  line.textContent = code + message;
  line.hidden = false;
}

/**
 * Runs an async UI action, reporting its failure in the error line instead of losing it.
 * @param {() => Promise<void>} action
 */
export async function reporting(action) {
  try {
    showError(undefined);
    await action();
  } catch (error) {
    showError(error);
  }
}
