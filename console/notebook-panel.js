// @ts-check
/**
 * The notebook: cells run in a code context of the open sandbox, one list of cells per context.
 * The context picker lists the sandbox's contexts (python, javascript, typescript, bash); "New
 * context" makes one in the chosen language, and a sandbox with none starts with a python notebook
 * whose context is made by its first run. Interrupt stops the context's running cell (its state
 * stays); Restart gives the context a fresh interpreter under the same id (its state goes). Runs
 * queue in their context as they do over the API: each cell shows its output as it comes. A
 * context that is gone (deleted, or its container slept or restarted) is said so, and the next run
 * makes a new one for the same cells.
 */
import { ApiError, callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";
import { followRun } from "./code-run.js";
import { notebookCell } from "./notebook-cell.js";

/** @typedef {import("./notebook-cell.js").NotebookCell} NotebookCell */
/**
 * @typedef {{ key: string, language: string, context: any | undefined, making: Promise<string> | undefined, cells: NotebookCell[], runs: NotebookCell[], list: HTMLElement }} Notebook
 * `context` is undefined until the notebook's first run makes it; `runs` are its cells running or
 * waiting their turn, in the order they were run (the first is the one the interpreter is on).
 */


/** @param {() => string} sandboxId */
export function notebookPanel(sandboxId) {
  const picker = /** @type {HTMLSelectElement} */ (byId("notebook-context"));
  const languageInput = /** @type {HTMLSelectElement} */ (byId("notebook-language"));
  const cellsBox = byId("notebook-cells");
  const state = byId("notebook-state");
  /** @type {Map<string, Notebook>} */
  const notebooks = new Map();
  /** @type {Notebook | undefined} */
  let shown;
  /** Stops following every run when the sandbox closes (the runs themselves go on). */
  let following = new AbortController();
  let unmade = 0;
  /** The key of a notebook whose context is not made yet. */
  const unmadeKey = () => `new:${++unmade}`;

  /** @param {string} language @param {any} [context] @returns {Notebook} */
  function addNotebook(language, context) {
    /** @type {Notebook} */
    const notebook = { key: context?.id ?? unmadeKey(), language, context, making: undefined, cells: [], runs: [], list: el("div", { class: "cells" }) };
    notebooks.set(notebook.key, notebook);
    addCell(notebook);
    return notebook;
  }

  /** @param {Notebook} notebook @param {NotebookCell} [after] */
  function addCell(notebook, after) {
    const cell = notebookCell({
      run: (c) => void run(notebook, c),
      runAndAdvance: (c) => {
        void run(notebook, c);
        const next = notebook.cells[notebook.cells.indexOf(c) + 1] ?? addCell(notebook, c);
        next.focus();
      },
      interrupt: (c) => void reporting(() => interrupt(c)),
      remove: (c) => {
        if (notebook.cells.length === 1) return;
        notebook.cells.splice(notebook.cells.indexOf(c), 1);
        c.root.remove();
      },
    });
    const at = after ? notebook.cells.indexOf(after) + 1 : notebook.cells.length;
    notebook.cells.splice(at, 0, cell);
    notebook.list.insertBefore(cell.root, notebook.cells[at + 1]?.root ?? null);
    return cell;
  }

  function showPicker() {
    picker.replaceChildren(
      ...[...notebooks.values()].map((notebook) => {
        const name = notebook.context ? `${notebook.language} · ${notebook.context.id}${notebook.context.isDefault ? " (default)" : ""}` : `${notebook.language} · new context, made on the first run`;
        return el("option", { value: notebook.key }, name);
      }),
    );
    if (shown) picker.value = shown.key;
  }

  /** @param {Notebook} notebook */
  function show(notebook) {
    shown = notebook;
    cellsBox.replaceChildren(notebook.list);
    showPicker();
    state.textContent = "";
  }

  /** The notebook's context id, made now if it has none yet (once, however many cells run at once). @param {Notebook} notebook */
  function contextOf(notebook) {
    if (notebook.context) return Promise.resolve(/** @type {string} */ (notebook.context.id));
    notebook.making ??= callJson("POST", sandboxPath(sandboxId(), "/code/contexts"), { language: notebook.language }).then(
      ({ context }) => {
        notebooks.delete(notebook.key);
        notebook.context = context;
        notebook.key = context.id;
        notebooks.set(notebook.key, notebook);
        showPicker();
        return /** @type {string} */ (context.id);
      },
      (error) => {
        notebook.making = undefined;
        throw error;
      },
    );
    return notebook.making;
  }

  /** @param {Notebook} notebook @param {NotebookCell} cell */
  async function run(notebook, cell) {
    if (cell.running()) return;
    cell.begin();
    notebook.runs.push(cell);
    const signal = following.signal;
    try {
      const contextId = await contextOf(notebook);
      await followRun(sandboxId(), { code: cell.code(), contextId }, cell.onEvent, signal);
    } catch (error) {
      if (signal.aborted) return;
      cell.fail(error);
      if (error instanceof ApiError && error.code === "CODE_CONTEXT_NOT_FOUND") forget(notebook);
    } finally {
      notebook.runs.splice(notebook.runs.indexOf(cell), 1);
    }
  }

  /** The notebook's context is gone: its cells stay, and its next run makes a new context. @param {Notebook} notebook */
  function forget(notebook) {
    if (!notebook.context) return;
    notebooks.delete(notebook.key);
    notebook.context = undefined;
    notebook.making = undefined;
    notebook.key = unmadeKey();
    notebooks.set(notebook.key, notebook);
    showPicker();
    if (shown === notebook) state.textContent = "its context is gone (deleted, or the sandbox's container restarted): the next run makes a new one";
  }

  /** @param {NotebookCell} cell */
  async function interrupt(cell) {
    const executionId = cell.executionId();
    if (executionId === undefined) return;
    await callJson("POST", sandboxPath(sandboxId(), `/code/executions/${encodeURIComponent(executionId)}/interrupt`));
  }

  /** Lists the sandbox's contexts: a notebook for each new one; the ones gone (deleted, or the container restarted) go. */
  async function refresh() {
    const { contexts } = await callJson("GET", sandboxPath(sandboxId(), "/code/contexts"));
    const ids = new Set(contexts.map((/** @type {any} */ context) => context.id));
    for (const [key, notebook] of notebooks) if (notebook.context && !ids.has(key)) notebooks.delete(key);
    for (const context of contexts) {
      const known = notebooks.get(context.id);
      if (known) known.context = context;
      else addNotebook(context.language, context);
    }
    if (notebooks.size === 0) addNotebook("python");
    show(shown && notebooks.get(shown.key) === shown ? shown : /** @type {Notebook} */ (notebooks.values().next().value));
  }

  function reset() {
    following.abort(new Error("the sandbox was closed"));
    following = new AbortController();
    notebooks.clear();
    shown = undefined;
    picker.replaceChildren();
    cellsBox.replaceChildren();
    state.textContent = "";
  }

  picker.addEventListener("change", () => {
    const notebook = notebooks.get(picker.value);
    if (notebook) show(notebook);
  });
  byId("notebook-new").addEventListener("click", () =>
    reporting(async () => {
      const { context } = await callJson("POST", sandboxPath(sandboxId(), "/code/contexts"), { language: languageInput.value });
      show(addNotebook(context.language, context));
      shown?.cells[0]?.focus();
    }),
  );
  byId("notebook-add").addEventListener("click", () => {
    if (shown) addCell(shown).focus();
  });
  byId("notebook-interrupt").addEventListener("click", () =>
    reporting(async () => {
      const cell = shown?.runs.find((c) => c.executionId() !== undefined);
      if (cell) await interrupt(cell);
    }),
  );
  byId("notebook-restart").addEventListener("click", () =>
    reporting(async () => {
      const notebook = shown;
      if (!notebook?.context) return;
      state.textContent = "restarting…";
      try {
        const { context } = await callJson("POST", sandboxPath(sandboxId(), `/code/contexts/${encodeURIComponent(notebook.context.id)}/restart`));
        notebook.context = context;
        if (shown === notebook) state.textContent = "restarted: a fresh interpreter, its variables gone";
      } catch (error) {
        state.textContent = "";
        throw error;
      }
    }),
  );

  return { refresh, reset };
}
