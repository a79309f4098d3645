/**
 * Asks workerd's egress listener about one connection of a sandbox, as workerd's own sidecar does:
 * `CONNECT <address:port>` (where the sandbox was going) with `X-Tls-Sni` (the name its TLS asked
 * for) or `X-Hostname` (the host its first HTTP request names). workerd answers
 *   200  an interception claims it: the connection is now a tunnel carrying the sandbox's HTTP (for
 *        TLS, the plain HTTP inside it: the proxy terminates it) to the Worker's handler;
 *   202  none does: the bytes would pass as they are. The runtime does not let workerd carry them
 *        (its policy, its resolver and its audit trail judge what leaves), so the tunnel is closed
 *        unused and the connection goes on through the proxy.
 * Anything else, or no answer in time, is a failure: the sandbox's connection is refused, as
 * workerd's own sidecar refuses it.
 */
import { connect, type Socket } from "node:net";
import { headEnd, parseResponseHead } from "./http-head.ts";

/** How long workerd is given to answer (it answers at once: it only looks its mappings up). */
const ANSWER_WAIT_MS = 10_000;
/** The largest answer head read (workerd's is a status line and a header or two). */
const MAX_ANSWER_HEAD_BYTES = 16 * 1024;

export interface WorkerdQuestion {
  /** Where workerd's egress listener is. */
  host: string;
  port: number;
  /** Where the sandbox was going. */
  destination: { ip: string; port: number };
  /** The sandbox's own end (workerd's sidecar names it too). */
  source: { ip: string; port: number };
  /** The TLS server name, or the HTTP host, the connection asked for. */
  serverName?: string;
  hostname?: string;
}

export type WorkerdAnswer =
  | {
      kind: "intercepted";
      tunnel: Socket;
      /** The bytes the question and the answer's head took each way (not the sandbox's). */
      overhead: { sent: number; received: number };
    }
  | { kind: "passed" }
  | { kind: "failed"; reason: string };

export function askWorkerd(question: WorkerdQuestion): Promise<WorkerdAnswer> {
  const { destination, source } = question;
  const authority = `${destination.ip.includes(":") ? `[${destination.ip}]` : destination.ip}:${destination.port}`;
  const fields = [
    `Host: ${authority}`,
    `X-Forwarded-For: ${source.ip}:${source.port}`,
    "X-Proto: tcp",
    ...(question.serverName ? [`X-Tls-Sni: ${question.serverName}`] : []),
    ...(question.hostname && !question.serverName ? [`X-Hostname: ${question.hostname}`] : []),
  ];
  const ask = Buffer.from(`CONNECT ${authority} HTTP/1.1\r\n${fields.join("\r\n")}\r\n\r\n`, "latin1");
  return new Promise((resolve) => {
    const tunnel = connect({ host: question.host, port: question.port });
    let held: Buffer = Buffer.alloc(0);
    let settled = false;
    const settle = (answer: WorkerdAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      tunnel.off("data", onData);
      if (answer.kind !== "intercepted") tunnel.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => settle({ kind: "failed", reason: `workerd's egress listener did not answer within ${ANSWER_WAIT_MS} ms` }), ANSWER_WAIT_MS);
    const onData = (chunk: Buffer) => {
      held = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      let end: number;
      try {
        end = headEnd(held, 0, 502);
      } catch (error) {
        return settle({ kind: "failed", reason: `workerd's answer: ${(error as Error).message}` });
      }
      if (end < 0) {
        if (held.length > MAX_ANSWER_HEAD_BYTES) settle({ kind: "failed", reason: "workerd's answer has no end to its head" });
        return;
      }
      let status: number;
      try {
        status = parseResponseHead(held.subarray(0, end)).status;
      } catch (error) {
        return settle({ kind: "failed", reason: `workerd's answer: ${(error as Error).message}` });
      }
      if (status === 202) return settle({ kind: "passed" });
      if (status !== 200) return settle({ kind: "failed", reason: `workerd answered ${status}` });
      tunnel.pause();
      if (end < held.length) tunnel.unshift(held.subarray(end));
      settle({ kind: "intercepted", tunnel, overhead: { sent: ask.length, received: end } });
    };
    tunnel.on("data", onData);
    tunnel.once("connect", () => tunnel.write(ask));
    tunnel.once("error", (error) => settle({ kind: "failed", reason: `workerd's egress listener: ${(error as NodeJS.ErrnoException).code ?? error.message}` }));
    tunnel.once("close", () => settle({ kind: "failed", reason: "workerd's egress listener closed the connection without answering" }));
  });
}
