// @ts-check
/**
 * The sandbox's exposed ports with links to them, from GET /v1/sandboxes/:id/ports. A service
 * without that route (it answers 404 NOT_FOUND) has no ports to show: the panel stays hidden.
 */
import { ApiError, callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";

/** @param {() => string} sandboxId */
export function portsPanel(sandboxId) {
  const panel = byId("ports-panel");
  const list = byId("ports-list");

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
        const label = `${port.port}${port.name ? ` (${port.name})` : ""}`;
        const href = typeof port.url === "string" ? port.url : undefined;
        return el("li", {}, href ? el("a", { href, target: "_blank", rel: "noopener" }, label) : label);
      }),
    );
    if (ports.length === 0) list.append(el("li", { class: "muted" }, "(no exposed ports)"));
  }

  byId("ports-refresh").addEventListener("click", () => reporting(refresh));
  return { refresh, reset: () => ((panel.hidden = true), list.replaceChildren()) };
}
