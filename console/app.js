// @ts-check
/**
 * The console page's entry: the token form, the sandbox picker, and the panels, which act on the
 * sandbox that is open. Opening a sandbox by name creates it if it does not exist (GET
 * /v1/sandboxes/:id starts its container).
 */
import { callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";
import { filesPanel } from "./files-panel.js";
import { networkPanel } from "./network-panel.js";
import { portsPanel } from "./ports-panel.js";
import { processesPanel } from "./processes-panel.js";
import { notebookPanel } from "./notebook-panel.js";
import { forgetSandbox, recentSandboxes, rememberSandbox } from "./recent-sandboxes.js";
import { runPanel } from "./run-panel.js";
import { terminalPanel } from "./terminal-panel.js";
import { forgetToken, storedToken, storeToken } from "./token.js";

let openSandbox = "";
const sandboxId = () => openSandbox;

const tokenInput = /** @type {HTMLInputElement} */ (byId("token-input"));
const sandboxInput = /** @type {HTMLInputElement} */ (byId("sandbox-input"));

const processes = processesPanel(sandboxId);
const run = runPanel(sandboxId, () => void reporting(processes.refresh));
const files = filesPanel(sandboxId);
const terminal = terminalPanel(sandboxId);
const ports = portsPanel(sandboxId);
const notebook = notebookPanel(sandboxId);
const network = networkPanel(sandboxId);

function showTokenState() {
  const has = storedToken() !== null;
  byId("token-state").textContent = has ? "token set for this tab" : "paste the API token (npm start prints it)";
  byId("token-forget").hidden = !has;
  tokenInput.hidden = has;
  byId("token-save").hidden = has;
  byId("sandbox-bar").hidden = !has;
  if (!has) closeSandbox();
}

function showRecent() {
  byId("sandbox-recent").replaceChildren(...recentSandboxes().map((id) => el("option", { value: id })));
}

function closeSandbox() {
  openSandbox = "";
  for (const panel of [run, processes, files, terminal, ports, notebook, network]) panel.reset();
  byId("panels").hidden = true;
  byId("sandbox-destroy").hidden = true;
  byId("sandbox-state").textContent = "";
}

/** @param {string} id */
async function open(id) {
  closeSandbox();
  byId("sandbox-state").textContent = "starting…";
  const info = await callJson("GET", sandboxPath(id));
  openSandbox = id;
  rememberSandbox(id);
  showRecent();
  byId("sandbox-state").textContent = `${id}: ready (container generation ${info.generationNumber})`;
  byId("sandbox-destroy").hidden = false;
  byId("panels").hidden = false;
  await Promise.all([processes.refresh(), files.show("."), ports.refresh(), notebook.refresh(), network.open()]);
}

byId("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (!token) return;
  storeToken(token);
  tokenInput.value = "";
  showTokenState();
});
byId("token-forget").addEventListener("click", () => {
  forgetToken();
  showTokenState();
});
byId("sandbox-form").addEventListener("submit", (event) => {
  event.preventDefault();
  void reporting(async () => {
    try {
      await open(sandboxInput.value.trim());
    } catch (error) {
      byId("sandbox-state").textContent = "";
      throw error;
    }
  });
});
byId("sandbox-destroy").addEventListener("click", () =>
  reporting(async () => {
    const id = openSandbox;
    if (!confirm(`Destroy sandbox ${id}? Its files and processes go with it.`)) return;
    closeSandbox();
    await callJson("DELETE", sandboxPath(id));
    forgetSandbox(id);
    showRecent();
    byId("sandbox-state").textContent = `${id}: destroyed`;
  }),
);
byId("terminal-open").addEventListener("click", () => reporting(terminal.open));

showTokenState();
showRecent();
