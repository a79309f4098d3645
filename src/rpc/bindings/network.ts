/** A sandbox's egress over /v1: its network policy, write-only secrets, the audit trail (../network.ts has their shapes). */
import {
  AUDIT_STREAM_EVENTS,
  auditPageSchema,
  auditQuerySchema,
  auditStreamQuerySchema,
  deleteSecretResultSchema,
  networkPolicySchema,
  networkPolicyStateSchema,
  secretInfoSchema,
  setSecretRequestSchema,
} from "../../../protocol/network.ts";
import type { Binding } from "./binding.ts";

export const networkBindings = {
  setNetworkPolicy: {
    verb: "PUT",
    path: "/network/policy",
    args: ["body"],
    body: networkPolicySchema,
    response: networkPolicyStateSchema,
    summary:
      "Set where the sandbox may connect (default allow or deny; allow and deny rules by host, `*.domain`, CIDR and port; deny wins) " +
      "and which headers the proxy adds on the way out (`inject`, naming secrets). In force at once for running processes: " +
      "connections the new policy denies are cut. The operator's ceiling (no network) still wins. On Cloudflare, HTTP and HTTPS are judged " +
      "by the Worker and other traffic follows the default: 501 NETWORK_POLICY_UNAVAILABLE names each rule the platform cannot enforce " +
      "(ports other than 80 and 443, DNS, a deny rule under default allow, a network denied while names pass; `context.rules`).",
    described: "The policy in force",
  },
  getNetworkPolicy: {
    verb: "GET",
    path: "/network/policy",
    args: [],
    response: networkPolicyStateSchema,
    summary: "The sandbox's network policy, whether it is enforced, and the secrets it names that are not set",
    described: "The policy",
  },
  setSecret: {
    verb: "PUT",
    path: "/network/secrets/:name",
    args: [{ path: "name" }, { body: "value" }],
    body: setSecretRequestSchema,
    response: secretInfoSchema,
    summary: "Set a secret injection rules name. Write-only: it never comes back in an answer, and never enters the sandbox",
    described: "Set (its name and when)",
  },
  listSecrets: {
    verb: "GET",
    path: "/network/secrets",
    args: [],
    response: secretInfoSchema.array(),
    key: "secrets",
    summary: "The sandbox's secrets, by name (never their values)",
    described: "Secrets",
  },
  deleteSecret: {
    verb: "DELETE",
    path: "/network/secrets/:name",
    args: [{ path: "name" }],
    response: deleteSecretResultSchema,
    summary: "Delete a secret (404 SECRET_NOT_FOUND); headers that named it are no longer sent",
    described: "Deleted",
  },
  getNetworkAudit: {
    verb: "GET",
    path: "/network/audit",
    args: ["query"],
    query: auditQuerySchema,
    response: auditPageSchema,
    summary:
      "Outbound connections, HTTP requests and name lookups after `since` (time, host, port, method and path, status, bytes each way, " +
      "decision: allowed, denied or injected, and the rule): a bounded log; `next` is where to read on, `dropped` what fell out of it",
    described: "A page of the audit trail",
  },
  streamNetworkAudit: {
    verb: "GET",
    path: "/network/audit/stream",
    args: ["resume"],
    query: auditStreamQuerySchema,
    answer: "sse",
    summary:
      "The audit trail as it grows, as Server-Sent Events: every entry after Last-Event-ID (or `?since=`; from the oldest kept without either), " +
      "then each new one as it happens. Watching neither starts the sandbox nor keeps it awake",
    described: "Audit events until the caller goes away.",
    events: AUDIT_STREAM_EVENTS,
  },
} as const satisfies Record<string, Binding>;
