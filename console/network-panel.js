// @ts-check
/**
 * The sandbox's egress: its network policy as JSON to edit (a JSON mistake or the service's
 * validation error is shown beside it, and the policy kept is not touched), its secrets by name
 * (set one, delete one; values go in and never come back), and the audit trail followed live
 * (GET …/network/audit/stream, read with fetch so that it carries the token). A service with no
 * egress proxy of its own answers NETWORK_POLICY_UNAVAILABLE: the panel says so.
 */
import { ApiError, callJson, sandboxPath } from "./api.js";
import { byId, el, reporting } from "./dom.js";
import { followFetchedEvents } from "./fetched-events.js";

/** Audit rows shown at most (the oldest leave first). */
const SHOWN = 200;

/** @param {() => string} sandboxId */
export function networkPanel(sandboxId) {
  const policyText = /** @type {HTMLTextAreaElement} */ (byId("network-policy"));
  const problem = byId("network-problem");
  const state = byId("network-state");
  const secrets = byId("secrets-list");
  const nameInput = /** @type {HTMLInputElement} */ (byId("secret-name"));
  const valueInput = /** @type {HTMLInputElement} */ (byId("secret-value"));
  const audit = byId("audit-list");
  const auditState = byId("audit-state");
  /** @type {(() => void) | undefined} */
  let stopAudit;

  /** @param {string} [text] */
  function showProblem(text) {
    problem.textContent = text ?? "";
    problem.hidden = text === undefined;
  }

  /** @param {any} answer the policy's state */
  function showPolicy(answer) {
    policyText.value = JSON.stringify(answer.policy, null, 2);
    const missing = answer.missingSecrets.length > 0 ? ` · secrets not set: ${answer.missingSecrets.join(", ")}` : "";
    state.textContent = (answer.enforced ? "enforced" : "not enforced (the sandbox is not running with network)") + missing;
  }

  async function refresh() {
    showProblem();
    showPolicy(await callJson("GET", sandboxPath(sandboxId(), "/network/policy")));
    await listSecrets();
  }

  async function listSecrets() {
    const { secrets: list } = await callJson("GET", sandboxPath(sandboxId(), "/network/secrets"));
    secrets.replaceChildren(
      ...list.map((/** @type {any} */ secret) => {
        const remove = el("button", { type: "button", class: "danger" }, "Delete");
        remove.addEventListener("click", () =>
          reporting(async () => {
            await callJson("DELETE", sandboxPath(sandboxId(), `/network/secrets/${encodeURIComponent(secret.name)}`));
            await refresh();
          }),
        );
        return el("li", { "data-secret": secret.name }, el("code", {}, secret.name), ` set ${secret.updatedAt} `, remove);
      }),
    );
    if (list.length === 0) secrets.append(el("li", { class: "muted" }, "(no secrets)"));
  }

  async function apply() {
    /** @type {unknown} */
    let policy;
    try {
      policy = JSON.parse(policyText.value);
    } catch (error) {
      showProblem(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    try {
      showPolicy(await callJson("PUT", sandboxPath(sandboxId(), "/network/policy"), policy));
      showProblem();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      showProblem(`${error.code}: ${error.message}`);
    }
  }

  /** @param {any} event */
  function showAudit(event) {
    const row =
      event.type === "dropped"
        ? el("tr", { class: "muted" }, el("td", { colspan: "6" }, `${event.count} entries dropped before they were read`))
        : el(
            "tr",
            { "data-seq": String(event.seq), class: event.decision },
            el("td", {}, event.time.slice(11, 23)),
            el("td", {}, event.kind),
            el("td", {}, `${event.host ?? event.ip ?? ""}${event.port ? `:${event.port}` : ""}${event.method ? ` ${event.method} ${event.path ?? ""}` : ""}`),
            el("td", {}, event.status === undefined ? "" : String(event.status)),
            el("td", {}, event.decision),
            el("td", {}, event.rule + (event.reason ? ` — ${event.reason}` : "")),
          );
    audit.prepend(row);
    while (audit.children.length > SHOWN) audit.lastElementChild?.remove();
  }

  function followAudit() {
    stopAudit?.();
    audit.replaceChildren();
    auditState.textContent = "following";
    stopAudit = followFetchedEvents(sandboxPath(sandboxId(), "/network/audit/stream"), showAudit, (trouble) => {
      auditState.textContent = trouble instanceof ApiError ? `${trouble.code}: ${trouble.message}` : "the audit stream broke off";
    });
  }

  async function open() {
    await refresh();
    followAudit();
  }

  function reset() {
    stopAudit?.();
    stopAudit = undefined;
    policyText.value = "";
    state.textContent = "";
    showProblem();
    secrets.replaceChildren();
    audit.replaceChildren();
    auditState.textContent = "";
  }

  byId("network-apply").addEventListener("click", () => reporting(apply));
  byId("network-reload").addEventListener("click", () => reporting(refresh));
  byId("secret-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void reporting(async () => {
      await callJson("PUT", sandboxPath(sandboxId(), `/network/secrets/${encodeURIComponent(nameInput.value.trim())}`), { value: valueInput.value });
      nameInput.value = "";
      valueInput.value = "";
      await refresh();
    });
  });
  return { open, reset };
}
