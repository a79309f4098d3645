/**
 * How the Durable Object judges one HTTP(S) request a container on Cloudflare sent out, with the one
 * reading of a policy the local proxy uses (protocol/network-policy.ts): the host the URL names
 * (a name, or an address literal that CIDR rules then match), the port it names (or the scheme's),
 * deny rules first, then the injection rule's headers filled in from the sandbox's secrets.
 *
 * The answer goes to the Worker's outbound handler for this one request only: the headers (with
 * secret values in them) are the request's, and the secrets named are there so that any error said
 * back can have them taken out. Nothing of it is kept.
 */
import { decide, injectionFor, normalizeHost } from "../../../protocol/network-policy.ts";
import { parseAddress, type NetworkPolicy } from "../../../protocol/network.ts";
import type { AuditRecord } from "./audit-ring.ts";

/** What the Worker's outbound handler needs of the sandbox's Durable Object (outbound-handler.ts). */
export interface EgressJudge {
  judgeEgress(request: EgressRequest): Promise<EgressJudgement>;
  recordEgress(record: AuditRecord): Promise<void>;
}

/** What the handler tells the Durable Object of a request. */
export interface EgressRequest {
  method: string;
  url: string;
}

export type EgressJudgement =
  | { allowed: false; status: number; rule: string; reason: string; record: AuditRecord }
  | {
      allowed: true;
      /** Headers to set on the request (replacing the container's own of those names). */
      headers: Record<string, string>;
      /** Values to take out of anything said back (the secrets the headers were made from). */
      redact: Record<string, string>;
      /** The audit entry, less what only the answer tells (status, bytes). */
      record: AuditRecord;
      /**
       * Locally: the sandbox key of the runtime that carries the request out (runtime/egress/worker-carrier.ts),
       * so that the host's loopback and link-local addresses stay out of reach. On Cloudflare none: the handler fetches.
       */
      carrier?: string;
    };

/** The rule a refusal names when the operator gives no sandbox outbound network, whatever the policy says. */
export const OPERATOR_RULE = "operator";

/** `networkAllowed: false` is the operator's ceiling (SANDBOX_NETWORK_ALLOWED=0): every request is refused. */
export function judgeEgress(policy: NetworkPolicy, secrets: ReadonlyMap<string, string>, request: EgressRequest, networkAllowed = true): EgressJudgement {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    const record: AuditRecord = { kind: "http", method: request.method, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: "not a URL", status: 400 };
    return { allowed: false, status: 400, rule: "proxy", reason: "the request names no URL", record };
  }
  const tls = url.protocol === "https:";
  const host = normalizeHost(url.hostname);
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  const literal = parseAddress(host) !== undefined;
  const base = {
    kind: tls ? ("https" as const) : ("http" as const),
    host,
    ...(literal ? { ip: host } : {}),
    port,
    method: request.method,
    path: url.pathname,
    bytesOut: 0,
    bytesIn: 0,
  };
  if (!networkAllowed) {
    const reason = "the operator gives no sandbox outbound network";
    return { allowed: false, status: 403, rule: OPERATOR_RULE, reason, record: { ...base, decision: "denied", rule: OPERATOR_RULE, reason, status: 403 } };
  }
  const verdict = decide(policy, { names: [host], port });
  if (!verdict.allowed) {
    const reason = "denied by the policy";
    return { allowed: false, status: 403, rule: verdict.rule, reason, record: { ...base, decision: "denied", rule: verdict.rule, reason, status: 403 } };
  }
  const injection = injectionFor(policy, host, port, secrets);
  if (injection === undefined) return { allowed: true, headers: {}, redact: {}, record: { ...base, decision: "allowed", rule: verdict.rule } };
  if (injection.missing.length > 0) {
    const reason = `secrets not set: ${injection.missing.join(", ")}`;
    return { allowed: true, headers: {}, redact: {}, record: { ...base, decision: "allowed", rule: verdict.rule, reason } };
  }
  // The secrets written into these headers as they are (a basic credential's header holds its value encoded, and is taken out whole).
  const redact = Object.fromEntries([...secrets].filter(([, value]) => Object.values(injection.headers).some((header) => header.includes(value))));
  return { allowed: true, headers: injection.headers, redact, record: { ...base, decision: "injected", rule: `${verdict.rule}+${injection.rule}` } };
}

