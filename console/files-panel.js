// @ts-check
/**
 * Browse and edit the sandbox's files: list a folder (paths relative to the workspace), open a text
 * file in a textarea, save it back. Binary files are listed but not opened.
 */
import { callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";

/** @param {string} folder @param {string} name */
function join(folder, name) {
  return folder === "." || folder === "" ? name : `${folder.replace(/\/+$/, "")}/${name}`;
}

/** @param {string} path */
function parent(path) {
  const cut = path.replace(/\/+$/, "").lastIndexOf("/");
  if (cut > 0) return path.slice(0, cut);
  return cut === 0 ? "/" : ".";
}

/** @param {() => string} sandboxId */
export function filesPanel(sandboxId) {
  const pathInput = /** @type {HTMLInputElement} */ (byId("files-path"));
  const list = byId("files-list");
  const editor = byId("editor");
  const editorPath = byId("editor-path");
  const editorState = byId("editor-state");
  const text = /** @type {HTMLTextAreaElement} */ (byId("editor-text"));

  /** @param {string} folder */
  async function show(folder) {
    const { files } = await callJson("POST", sandboxPath(sandboxId(), "/files/list"), { path: folder });
    pathInput.value = folder;
    list.replaceChildren(
      ...files
        .sort((/** @type {any} */ a, /** @type {any} */ b) => Number(b.type === "directory") - Number(a.type === "directory") || a.name.localeCompare(b.name))
        .map((/** @type {any} */ file) => {
          const isFolder = file.type === "directory";
          const link = el("button", { type: "button", class: "link", "data-file": file.name }, isFolder ? `${file.name}/` : file.name);
          link.addEventListener("click", () => reporting(() => (isFolder ? show(join(folder, file.name)) : open(join(folder, file.name)))));
          return el("li", {}, link, el("span", { class: "muted" }, isFolder ? "" : ` ${file.size} B`));
        }),
    );
    if (files.length === 0) list.append(el("li", { class: "muted" }, "(empty)"));
  }

  /** @param {string} path @param {string} [content] */
  async function open(path, content) {
    if (content === undefined) {
      const file = await callJson("POST", sandboxPath(sandboxId(), "/files/read"), { path });
      if (file.isBinary) throw new Error(`${path} is a binary file (${file.mimeType}): the console edits text only`);
      content = /** @type {string} */ (file.content);
    }
    editorPath.textContent = path;
    editorState.textContent = "";
    text.value = content;
    editor.hidden = false;
  }

  async function save() {
    const path = editorPath.textContent ?? "";
    const { bytesWritten } = await callJson("POST", sandboxPath(sandboxId(), "/files/write"), { path, content: text.value });
    editorState.textContent = `saved (${bytesWritten} bytes)`;
    await show(pathInput.value || ".");
  }

  byId("files-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void reporting(() => show(pathInput.value || "."));
  });
  byId("files-up").addEventListener("click", () => reporting(() => show(parent(pathInput.value || "."))));
  byId("files-new").addEventListener("click", () =>
    reporting(async () => {
      const name = prompt("New file name");
      if (name) await open(join(pathInput.value || ".", name), "");
    }),
  );
  byId("editor-save").addEventListener("click", () => reporting(save));
  text.addEventListener("input", () => (editorState.textContent = "modified"));

  function reset() {
    editor.hidden = true;
    list.replaceChildren();
    pathInput.value = ".";
  }

  return { show, reset };
}
