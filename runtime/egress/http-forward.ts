/**
 * One HTTP request of a sandbox (plain, or inside TLS our proxy terminated), judged
 * (judge-request.ts), given the headers an injection rule adds, and forwarded to the host it names,
 * as the runtime resolves it.
 *
 * A refusal is a 403 whose body says what was refused and by which rule; every request, refused or
 * not, goes into the audit trail with its bytes each way. Secret values are kept out of every error
 * said back.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { EGRESS_HEADER, refusalBody, refusalHeader, UPSTREAM_FAILED, upstreamFailureBody } from "../../protocol/egress-refusal.ts";
import { redactSecrets } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import { auditRecord, factsOf, HOP_HEADERS, judgeRequest, passedHeaders, upstreamRequest } from "./judge-request.ts";
import type { SandboxEgress } from "./sandbox-egress.ts";

export async function forwardRequest(egress: SandboxEgress, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const facts = factsOf(req);
  const { host, port, tls, path } = facts;
  let bytesOut = 0;
  req.on("data", (chunk: Buffer) => (bytesOut += chunk.length));
  const record = (fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">) => egress.audit.add(auditRecord(facts, { bytesOut, ...fields }));

  const judged = await judgeRequest(egress, req, facts);
  if (!judged.allowed) {
    record({ decision: "denied", rule: judged.rule, reason: judged.reason, status: judged.status, ...(judged.ip ? { ip: judged.ip } : {}) });
    const body = refusalBody({ method: req.method ?? "GET", tls, host, port, path }, judged.reason, judged.rule);
    res.writeHead(judged.status, { "content-type": "text/plain; charset=utf-8", [EGRESS_HEADER]: refusalHeader(judged.rule), connection: "close" });
    res.end(body);
    req.resume();
    return;
  }

  const { decision, rule, missing, target } = judged;
  const upstream = upstreamRequest(egress, judged, facts, req, passedHeaders(req, judged.injected));
  upstream.on("response", (answer) => {
    let bytesIn = 0;
    answer.on("data", (chunk: Buffer) => (bytesIn += chunk.length));
    const raw: string[] = [];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) {
      if (!HOP_HEADERS.has(answer.rawHeaders[i]!.toLowerCase())) raw.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, raw);
    answer.pipe(res);
    res.once("close", () => {
      if (!res.writableFinished) answer.destroy();
      record({ decision, rule, ip: target.host, status: answer.statusCode ?? 0, bytesIn, ...(missing ? { reason: missing } : {}) });
    });
  });
  upstream.on("error", (error) => {
    const reason = redactSecrets(`upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`, egress.secrets);
    if (res.headersSent) {
      record({ decision, rule, ip: target.host, reason });
      res.destroy();
      return;
    }
    record({ decision, rule, ip: target.host, status: 502, reason });
    res.writeHead(502, { "content-type": "text/plain; charset=utf-8", [EGRESS_HEADER]: UPSTREAM_FAILED });
    res.end(upstreamFailureBody(host, port, reason));
  });
  req.pipe(upstream);
}
