// @ts-check
/**
 * The sandbox's processes: list them, kill one (its process group), and follow one's log through a
 * signed log-stream URL.
 */
import { callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";
import { followEvents } from "./event-stream.js";

/** @param {() => string} sandboxId */
export function processesPanel(sandboxId) {
  const list = byId("processes-list");
  const log = byId("process-log");
  /** @type {(() => void) | undefined} */
  let stopLog;

  async function refresh() {
    const { processes } = await callJson("GET", sandboxPath(sandboxId(), "/processes"));
    list.replaceChildren(
      ...processes.map((/** @type {any} */ process) => {
        const kill = el("button", { type: "button", class: "danger" }, "Kill");
        kill.addEventListener("click", () =>
          reporting(async () => {
            await callJson("DELETE", sandboxPath(sandboxId(), `/processes/${encodeURIComponent(process.id)}`));
            await refresh();
          }),
        );
        kill.toggleAttribute("disabled", process.status !== "running");
        const logs = el("button", { type: "button" }, "Log");
        logs.addEventListener("click", () => reporting(() => follow(process.id)));
        const status = process.status + (process.exitCode === undefined ? "" : ` (${process.exitCode})`);
        return el("tr", { "data-process": process.id }, el("td", {}, process.id), el("td", {}, String(process.pid ?? "")), el("td", {}, el("code", {}, process.command)), el("td", {}, status), el("td", {}, logs, kill));
      }),
    );
  }

  /** @param {string} processId */
  async function follow(processId) {
    stopLog?.();
    const { url } = await callJson("POST", sandboxPath(sandboxId(), `/processes/${encodeURIComponent(processId)}/logs/stream-url`), {});
    log.replaceChildren(el("span", { class: "note" }, `log of ${processId}\n`));
    log.hidden = false;
    stopLog = followEvents(url, ["stdout", "stderr", "exit", "error"], (event) => {
      if (event.type === "stdout" || event.type === "stderr") log.append(el("span", { class: event.type }, event.data));
      else {
        log.append(el("span", { class: "note" }, event.type === "exit" ? `[exited: ${event.status}${event.exitCode === undefined ? "" : ` ${event.exitCode}`}]\n` : `[${event.error}]\n`));
        stopLog?.();
        void reporting(refresh);
      }
    });
  }

  function reset() {
    stopLog?.();
    stopLog = undefined;
    log.hidden = true;
    list.replaceChildren();
  }

  byId("processes-refresh").addEventListener("click", () => reporting(refresh));
  return { refresh, reset };
}
