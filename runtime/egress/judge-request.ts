/**
 * What the proxy decides about one HTTP request of a sandbox (plain, or inside TLS it terminated),
 * from its head alone, before anything goes out: the host the request names and the port it was
 * sent to, whether the policy lets it through (by name, then by the address the runtime resolves
 * the name to), where it goes, and which headers an injection rule adds. The address the sandbox
 * dialed plays no part. Over TLS the Host must be the name the client's TLS asked for. Plain
 * requests and protocol upgrades (http-exchange.ts, upgrade-forward.ts) are judged alike.
 */
import { decide, injectionFor, normalizeHost } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import type { FlowContext } from "./flow-context.ts";
import { fieldTokens, fieldValues, MessageError, type HeaderField, type RequestHead } from "./http-head.ts";
import type { EgressFlows } from "./egress-flows.ts";
import { neverReached, resolveTargets, type Target } from "./upstream.ts";

/** Fields about one hop, never passed on (RFC 9110 7.6.1), and the proxy's own. */
export const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "upgrade"]);

/**
 * Fields that say where a request goes and where its body ends. Bodies pass through as they came,
 * so these pass as they came too: a Connection field listing them, or an injection rule naming
 * them, would let the server frame the body otherwise than the proxy did.
 */
const FRAMING_HEADERS = new Set(["host", "content-length", "transfer-encoding"]);

/** What is known of a request before it is judged: what the audit trail says of it. */
export interface RequestFacts {
  host: string | undefined;
  port: number;
  tls: boolean;
  /** The name the client's TLS asked for (TLS only). */
  serverName: string | undefined;
  method: string;
  /** The path without its query (for the audit trail). */
  path: string;
  /** The request target as the server gets it (origin-form). */
  target: string;
}

export type Judgement =
  | { allowed: false; status: number; rule: string; reason: string; ip?: string }
  | {
      allowed: true;
      host: string;
      target: Target;
      /** `injected` when an injection rule's headers go on it. */
      decision: "allowed" | "injected";
      rule: string;
      /** The injection rule's headers (replacing the sandbox's own of those names). */
      injected: Record<string, string>;
      /** Secrets an injection rule names that are not set. */
      missing: string | undefined;
    };

/** The facts of a request head; a head that names its host ambiguously is refused. */
export function factsOf(head: RequestHead, flow: FlowContext): RequestFacts {
  const hosts = fieldValues(head.fields, "host");
  if (hosts.length > 1) throw new MessageError(400, "the request has more than one Host");
  let target = head.target;
  let host = hostOf(hosts[0]);
  if (/^https?:\/\//i.test(target)) {
    // Absolute form: a server takes its authority over Host (RFC 9112 3.2.2), so the two must agree.
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new MessageError(400, "the request target is not a URL");
    }
    if (url.username || url.password) throw new MessageError(400, "the request target holds credentials");
    if (hosts.length > 0 && hostOf(url.host) !== host) throw new MessageError(400, `the request target's host (${url.host}) is not its Host (${hosts[0]})`);
    host = hostOf(url.host);
    target = `${url.pathname}${url.search}`;
  } else if (!target.startsWith("/") && !(target === "*" && head.method === "OPTIONS")) {
    throw new MessageError(400, `the request target ${JSON.stringify(target.slice(0, 100))} is not a path`);
  }
  return {
    host,
    port: flow.destination.port,
    tls: flow.serverName !== undefined,
    serverName: flow.serverName,
    method: head.method,
    path: target.split("?")[0]!,
    target,
  };
}

/** The audit entry of a request, from its facts and what happened. */
export function auditRecord(facts: RequestFacts, fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">): AuditRecord {
  return {
    kind: facts.tls ? "https" : "http",
    ...(facts.host ? { host: facts.host } : {}),
    port: facts.port,
    method: facts.method,
    path: facts.path,
    bytesOut: 0,
    bytesIn: 0,
    ...fields,
  };
}

export async function judgeRequest(egress: EgressFlows, facts: RequestFacts): Promise<Judgement> {
  const { host, port, serverName } = facts;
  if (!host) return { allowed: false, status: 400, rule: "proxy", reason: "the request names no Host" };
  if (facts.tls && host !== serverName) return { allowed: false, status: 421, rule: "proxy", reason: `the Host (${host}) is not the name TLS asked for (${serverName})` };
  const byName = decide(egress.policy, { names: [host], port });
  if (!byName.allowed) return { allowed: false, status: 403, rule: byName.rule, reason: "denied by the policy" };
  let target: Target | undefined;
  try {
    target = (await resolveTargets(host, port, egress.testHosts))[0];
  } catch (error) {
    return { allowed: false, status: 502, rule: "proxy", reason: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})` };
  }
  if (!target) return { allowed: false, status: 502, rule: "proxy", reason: `${host} has no address` };
  const never = target.mapped ? undefined : neverReached(target.host);
  if (never) return { allowed: false, status: 403, rule: "never", reason: never, ip: target.host };
  const verdict = target.mapped ? byName : decide(egress.policy, { names: [host], ip: target.host, port });
  if (!verdict.allowed) return { allowed: false, status: 403, rule: verdict.rule, reason: "denied by the policy (its address)", ip: target.host };
  const injection = injectionFor(egress.policy, host, port, egress.secrets);
  const injected = injection !== undefined && injection.missing.length === 0;
  return {
    allowed: true,
    host,
    target,
    decision: injected ? "injected" : "allowed",
    rule: injected ? `${verdict.rule}+${injection.rule}` : verdict.rule,
    injected: injection?.headers ?? {},
    missing: injection?.missing.length ? `secrets not set: ${injection.missing.join(", ")}` : undefined,
  };
}

/** The host a Host header names, as rules compare it (no port). */
function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(header.trim());
  return match ? normalizeHost(match[1]!) : undefined;
}

/**
 * The request's fields as sent, less those of the hop (and those its Connection field lists), with
 * the injected ones set in place of the sandbox's own of those names. Framing fields stay as sent.
 */
export function passedFields(fields: readonly HeaderField[], injected: Record<string, string>): HeaderField[] {
  const listed = new Set(fieldTokens(fields, "connection").filter((name) => !FRAMING_HEADERS.has(name)));
  const injects = Object.entries(injected).filter(([name]) => !FRAMING_HEADERS.has(name) && !HOP_HEADERS.has(name));
  const replaced = new Set(injects.map(([name]) => name));
  const passed = fields.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_HEADERS.has(lower) && !listed.has(lower) && !replaced.has(lower);
  });
  return [...passed, ...injects];
}

/** A server's fields as it sent them, less those of the hop (and those its Connection field lists). */
export function answeredFields(fields: readonly HeaderField[]): HeaderField[] {
  const listed = new Set(fieldTokens(fields, "connection").filter((name) => !FRAMING_HEADERS.has(name)));
  return fields.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_HEADERS.has(lower) && !listed.has(lower);
  });
}
