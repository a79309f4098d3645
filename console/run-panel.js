// @ts-check
/**
 * Run a command and watch its output as it comes: POST /exec with `stream: "url"` starts it and
 * answers with a signed URL of its event stream, which an EventSource follows to `complete`. "Start
 * in background" starts it as a process instead (the processes panel lists it).
 */
import { callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";
import { followEvents } from "./event-stream.js";

/**
 * @param {() => string} sandboxId
 * @param {() => void} onProcessesChanged
 */
export function runPanel(sandboxId, onProcessesChanged) {
  const form = byId("run-form");
  const input = /** @type {HTMLInputElement} */ (byId("run-command"));
  const output = byId("run-output");
  const status = byId("run-status");
  /** @type {(() => void) | undefined} */
  let stop;

  function reset() {
    stop?.();
    stop = undefined;
    output.replaceChildren();
    status.textContent = "";
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void reporting(async () => {
      reset();
      status.textContent = "starting…";
      const started = await callJson("POST", sandboxPath(sandboxId(), "/exec"), { command: input.value, stream: "url" });
      status.textContent = `running (${started.processId})`;
      const done = () => {
        stop?.();
        stop = undefined;
        onProcessesChanged();
      };
      stop = followEvents(
        started.url,
        ["stdout", "stderr", "complete", "error", "truncated"],
        (event) => {
          if (event.type === "stdout" || event.type === "stderr") output.append(el("span", { class: event.type }, event.data));
          else if (event.type === "truncated") output.append(el("span", { class: "note" }, `[${event.droppedBytes} bytes no longer kept]\n`));
          else if (event.type === "complete") {
            status.textContent = event.result.timedOut ? "timed out" : `exit code ${event.exitCode}`;
            done();
          } else if (event.type === "error") {
            status.textContent = `error: ${event.error}`;
            done();
          }
        },
        () => (status.textContent = "connection lost, reconnecting…"),
      );
    });
  });

  byId("run-background").addEventListener("click", () =>
    reporting(async () => {
      if (!input.reportValidity()) return;
      const { process } = await callJson("POST", sandboxPath(sandboxId(), "/processes"), { command: input.value });
      status.textContent = `started ${process.id} (pid ${process.pid}) in the background`;
      onProcessesChanged();
    }),
  );

  return { reset };
}
