// @ts-check
/**
 * The sandbox's exposed ports with links to them (GET /v1/sandboxes/:id/ports), and a form to
 * expose one more. A service without the ports routes (it answers 404 NOT_FOUND) has no ports to
 * show: the panel stays hidden. A private port's link carries its own token, which the service
 * trades for a cookie when a browser opens it.
 */
import { ApiError, callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";

/** @param {() => string} sandboxId */
export function portsPanel(sandboxId) {
  const panel = byId("ports-panel");
  const list = byId("ports-list");
  const portInput = /** @type {HTMLInputElement} */ (byId("ports-port"));

  async function refresh() {
    let answer;
    try {
      answer = await callJson("GET", sandboxPath(sandboxId(), "/ports"));
    } catch (error) {
      if (error instanceof ApiError && error.code === "NOT_FOUND") {
        panel.hidden = true;
        return;
      }
      throw error;
    }
    panel.hidden = false;
    const ports = Array.isArray(answer?.ports) ? answer.ports : [];
    list.replaceChildren(
      ...ports.map((/** @type {any} */ port) => {
        const label = `${port.port}${port.name ? ` (${port.name})` : ""}${port.public ? " · public" : ""}`;
        return el("li", { "data-port": String(port.port) }, el("a", { href: port.url, target: "_blank", rel: "noopener noreferrer" }, label));
      }),
    );
    if (ports.length === 0) list.append(el("li", { class: "muted" }, "(no exposed ports)"));
  }

  byId("ports-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void reporting(async () => {
      await callJson("POST", sandboxPath(sandboxId(), "/ports"), { port: Number(portInput.value) });
      portInput.value = "";
      await refresh();
    });
  });
  byId("ports-refresh").addEventListener("click", () => reporting(refresh));
  return { refresh, reset: () => ((panel.hidden = true), list.replaceChildren()) };
}
