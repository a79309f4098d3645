// @ts-check
/**
 * One notebook cell: its code in a textarea (Shift+Enter runs it and moves on, Ctrl+Enter runs it
 * in place, Tab indents), its execution count, and its output drawn from the run's events as they
 * come: stdout and stderr in order, each result in its richest form, an error with its traceback,
 * and how the run ended. Everything in the output is the cell's own, hostile, data: it goes in as
 * text or through the result views, never as markup.
 */
import { el } from "./dom.js";
import { resultView } from "./result-view.js";

const INDENT = "    ";

/**
 * @typedef {{
 *   root: HTMLElement,
 *   code: () => string,
 *   focus: () => void,
 *   begin: () => void,
 *   onEvent: (event: any) => void,
 *   fail: (error: unknown) => void,
 *   executionId: () => string | undefined,
 *   running: () => boolean,
 * }} NotebookCell
 */

/**
 * @param {{ run: (cell: NotebookCell) => void, runAndAdvance: (cell: NotebookCell) => void, interrupt: (cell: NotebookCell) => void, remove: (cell: NotebookCell) => void }} actions
 * @param {string} [code]
 * @returns {NotebookCell}
 */
export function notebookCell(actions, code = "") {
  const count = el("span", { class: "cell-count" }, "[ ]");
  const runButton = el("button", { type: "button", class: "cell-run", title: "Run (Shift+Enter)" }, "Run");
  const stopButton = el("button", { type: "button", class: "cell-interrupt danger", hidden: "" }, "Interrupt");
  const removeButton = el("button", { type: "button", class: "cell-remove link", title: "Remove this cell" }, "remove");
  const status = el("span", { class: "cell-status muted" });
  const editor = /** @type {HTMLTextAreaElement} */ (el("textarea", { class: "cell-code", spellcheck: "false", rows: "2", "aria-label": "cell code" }));
  editor.value = code;
  /** The editor as tall as its code (up to a point). */
  const fitRows = () => (editor.rows = Math.min(30, Math.max(2, editor.value.split("\n").length)));
  const output = el("div", { class: "cell-output", "aria-live": "polite" });
  const root = el("div", { class: "cell" }, el("div", { class: "cell-head" }, count, runButton, stopButton, status, removeButton), editor, output);
  /** @type {string | undefined} */
  let executionId;
  let running = false;

  /** @type {NotebookCell} */
  const cell = {
    root,
    code: () => editor.value,
    focus: () => editor.focus(),
    executionId: () => executionId,
    running: () => running,
    begin() {
      fitRows();
      output.replaceChildren();
      executionId = undefined;
      running = true;
      count.textContent = "[*]";
      status.textContent = "starting…";
      stopButton.hidden = false;
      root.dataset.state = "running";
    },
    onEvent(event) {
      if (event.type === "start") {
        executionId = event.executionId;
        status.textContent = "running";
      } else if (event.type === "stdout" || event.type === "stderr") appendStream(event.type, String(event.data));
      else if (event.type === "result") output.append(resultView(event.result ?? {}));
      else if (event.type === "error") output.append(errorView(event.error));
      else if (event.type === "truncated") output.append(el("p", { class: "note" }, `[${event.droppedEvents} events of this run are no longer kept]`));
      else if (event.type === "complete") end(event);
    },
    fail(error) {
      const code = error && typeof error === "object" && "code" in error ? `${error.code}: ` : "";
      finish("[!]", `failed: ${code}${error instanceof Error ? error.message : String(error)}`, "failed");
    },
  };

  /** Consecutive chunks share one block, so output reads as the program wrote it. @param {string} stream @param {string} data */
  function appendStream(stream, data) {
    const last = output.lastElementChild;
    const block = last?.classList.contains("stream") ? last : output.appendChild(el("pre", { class: "output stream" }));
    block.append(el("span", { class: stream }, data));
  }

  /** @param {any} event complete */
  function end(event) {
    const how = event.contextRestarted
      ? "the interpreter was restarted: the context's state is gone"
      : event.timedOut
        ? "timed out"
        : event.interrupted
          ? "interrupted"
          : `done in ${Math.round(event.duration ?? 0)} ms`;
    finish(event.executionCount > 0 ? `[${event.executionCount}]` : "[ ]", how, event.interrupted || event.contextRestarted ? "interrupted" : "done");
  }

  /** @param {string} label @param {string} text @param {string} state */
  function finish(label, text, state) {
    running = false;
    count.textContent = label;
    status.textContent = text;
    stopButton.hidden = true;
    root.dataset.state = state;
  }

  editor.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.shiftKey || event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (event.shiftKey) actions.runAndAdvance(cell);
      else actions.run(cell);
    } else if (event.key === "Tab" && !event.shiftKey && !event.ctrlKey && !event.altKey) {
      event.preventDefault();
      editor.setRangeText(INDENT, editor.selectionStart, editor.selectionEnd, "end");
      fitRows();
    }
  });
  editor.addEventListener("input", fitRows);
  fitRows();
  runButton.addEventListener("click", () => actions.run(cell));
  stopButton.addEventListener("click", () => actions.interrupt(cell));
  removeButton.addEventListener("click", () => actions.remove(cell));
  return cell;
}

/**
 * The code's error: its traceback as the language printed it (or name and value when it has none).
 * A stream's own failure arrives as a bare message.
 * @param {unknown} error
 */
function errorView(error) {
  if (typeof error === "string") return el("p", { class: "note cell-error" }, error);
  const { name = "Error", value = "", traceback = [] } = /** @type {{ name?: string, value?: string, traceback?: string[] }} */ (error ?? {});
  const lines = Array.isArray(traceback) && traceback.length > 0 ? traceback.map((line) => withoutColour(String(line))) : [`${name}: ${value}`];
  return el("pre", { class: "output cell-error", "data-error": String(name) }, lines.join("\n"));
}

/** Terminal colour codes (IPython's tracebacks may carry them) are left out of the text. @param {string} text */
function withoutColour(text) {
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}
