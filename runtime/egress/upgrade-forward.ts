/**
 * A protocol upgrade (a WebSocket handshake) from a sandbox, plain or inside TLS our proxy
 * terminated: judged like any request (judge-request.ts), its headers injected, and sent to the
 * host it names with its Upgrade. When the server switches protocols, its 101 goes back and the two
 * connections are joined byte for byte until either side closes, or until a policy change denies
 * the host (then both are cut). A server that answers otherwise has its answer passed back and the
 * connection closed. A refusal is a 403 with the rule, as for any request. The audit entry is
 * written when the joined connection ends, with its bytes each way.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { EGRESS_HEADER, refusalBody, refusalHeader, UPSTREAM_FAILED, upstreamFailureBody } from "../../protocol/egress-refusal.ts";
import { redactSecrets } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import { auditRecord, factsOf, HOP_HEADERS, judgeRequest, passedHeaders, upstreamRequest } from "./judge-request.ts";
import type { SandboxEgress } from "./sandbox-egress.ts";

export async function forwardUpgrade(egress: SandboxEgress, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  socket.on("error", () => undefined);
  const facts = factsOf(req);
  const record = (fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">) => egress.audit.add(auditRecord(facts, fields));
  const judged = await judgeRequest(egress, req, facts);
  if (!judged.allowed) {
    record({ decision: "denied", rule: judged.rule, reason: judged.reason, status: judged.status, ...(judged.ip ? { ip: judged.ip } : {}) });
    const body = refusalBody(facts, judged.reason, judged.rule);
    socket.end(
      `HTTP/1.1 ${judged.status} Refused\r\ncontent-type: text/plain; charset=utf-8\r\n${EGRESS_HEADER}: ${refusalHeader(judged.rule)}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    return;
  }
  const { decision, rule, target, missing } = judged;
  const headers = { ...passedHeaders(req, judged.injected), connection: "Upgrade", upgrade: req.headers.upgrade ?? "websocket" };
  const upstream = upstreamRequest(egress, judged, facts, req, headers);
  const ended = (fields: Partial<AuditRecord>) => record({ decision, rule, ip: target.host, ...(missing ? { reason: missing } : {}), ...fields });

  upstream.on("upgrade", (answer: IncomingMessage, server: Duplex, serverHead: Buffer) => {
    server.on("error", () => undefined);
    socket.write(`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\n${rawHeaderLines(answer.rawHeaders)}\r\n`);
    if (serverHead.length > 0) socket.write(serverHead);
    if (head.length > 0) server.write(head);
    let bytesOut = head.length;
    let bytesIn = serverHead.length;
    let reason: string | undefined;
    socket.on("data", (chunk: Buffer) => (bytesOut += chunk.length));
    server.on("data", (chunk: Buffer) => (bytesIn += chunk.length));
    socket.pipe(server);
    server.pipe(socket);
    const untrack = egress.track({
      names: [judged.host],
      ip: target.host,
      port: facts.port,
      cut(why) {
        reason = why;
        socket.destroy();
        server.destroy();
      },
    });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      untrack();
      socket.destroy();
      server.destroy();
      ended({ status: answer.statusCode ?? 101, bytesOut, bytesIn, ...(reason ? { reason } : {}) });
    };
    socket.once("close", finish);
    server.once("close", finish);
  });
  upstream.on("response", (answer) => {
    // The server did not switch protocols: its answer goes back as it is, and the connection ends.
    const kept = answer.rawHeaders.filter((_value, i, raw) => i % 2 === 0 ? !HOP_HEADERS.has(raw[i]!.toLowerCase()) : !HOP_HEADERS.has(raw[i - 1]!.toLowerCase()));
    socket.write(`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}\r\n${rawHeaderLines(kept)}connection: close\r\n\r\n`);
    answer.pipe(socket);
    answer.once("end", () => ended({ status: answer.statusCode ?? 0 }));
  });
  upstream.on("error", (error) => {
    const why = redactSecrets(`upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`, egress.secrets);
    ended({ status: 502, reason: why });
    socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n${EGRESS_HEADER}: ${UPSTREAM_FAILED}\r\nconnection: close\r\n\r\n${upstreamFailureBody(facts.host, facts.port, why)}`);
  });
  upstream.end();
}

/** Header lines as the server sent them (names and values unchanged). */
function rawHeaderLines(raw: string[]): string {
  let lines = "";
  for (let i = 0; i < raw.length; i += 2) lines += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return lines;
}
