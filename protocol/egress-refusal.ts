/**
 * What a sandbox's program is told when its egress refuses a request, wherever the refusal is made:
 * the local runtime's proxy and, on Cloudflare, the Worker's outbound handler answer alike, so a
 * program (and a test) reads the same status, header and body in both places. The header says the
 * answer came from the egress and names the deciding rule; the body says it in a sentence.
 */

/** Set on every answer the egress makes itself (a refusal, a failed upstream), never on the server's own. */
export const EGRESS_HEADER = "x-sandbox-egress";

/** What a refused request was, as the refusal names it. */
export interface RefusedRequest {
  method: string;
  tls: boolean;
  host: string | undefined;
  port: number;
  /** Without the query. */
  path: string;
}

/** The header value of a refusal: `denied; rule=<rule>`. */
export function refusalHeader(rule: string): string {
  return `denied; rule=${rule}`;
}

export function refusalBody(request: RefusedRequest, reason: string, rule: string): string {
  return `egress denied: ${request.method} ${request.tls ? "https" : "http"}://${request.host ?? "?"}:${request.port}${request.path}: ${reason} (rule ${rule})\n`;
}

/** The header value when the request was allowed but its destination could not be reached. */
export const UPSTREAM_FAILED = "upstream-failed";

/** `reason` must already have every secret value taken out. */
export function upstreamFailureBody(host: string | undefined, port: number, reason: string): string {
  return `egress: ${host}:${port} failed: ${reason}\n`;
}
