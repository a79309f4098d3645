/**
 * The audit trail's event stream (src/sandbox/network-audit-stream.ts) over the runtime's own
 * bounded log (runtime/egress/audit-log.ts), long poll and all: entries as `audit` events whose id
 * is their seq, one `dropped` event for what the ring lost before it was read (resuming after it
 * reads on), new entries as they come, and no read once the reader has gone.
 */
import { describe, expect, it } from "vitest";
import { readSseStream, type SseMessage } from "../../protocol/sse.ts";
import { AuditLog } from "../../runtime/egress/audit-log.ts";
import { auditEventStream } from "../../src/sandbox/network-audit-stream.ts";

const entry = (port: number) => ({ kind: "tcp" as const, ip: "192.0.2.1", port, bytesOut: 0, bytesIn: 0, decision: "denied" as const, rule: "default" });

function streamOf(log: AuditLog, since: number, reads: number[] = []) {
  return auditEventStream(async (from, waitMs) => {
    reads.push(from);
    await log.waitAfter(from, waitMs);
    return log.read(from);
  }, since);
}

describe("the audit event stream", () => {
  it("says what the bounded log dropped, with an id to resume after, then the entries it kept", async () => {
    const log = new AuditLog(3);
    for (let port = 1; port <= 5; port++) log.add(entry(port));
    const messages: SseMessage[] = [];
    for await (const message of readSseStream(streamOf(log, 0))) {
      messages.push(message);
      if (messages.length === 4) break;
    }
    expect(messages.map((message) => [message.event, message.id])).toEqual([
      ["dropped", "2"],
      ["audit", "3"],
      ["audit", "4"],
      ["audit", "5"],
    ]);
    expect(JSON.parse(messages[0]!.data)).toEqual({ type: "dropped", seq: 2, count: 2 });
    expect(JSON.parse(messages[1]!.data)).toMatchObject({ type: "audit", seq: 3, port: 3 });
  });

  it("waits for the next entry and sends it as it comes; a reader that leaves stops the reads", async () => {
    const log = new AuditLog();
    log.add(entry(1));
    const reads: number[] = [];
    const reader = readSseStream(streamOf(log, 1, reads))[Symbol.asyncIterator]();
    const next = reader.next();
    setTimeout(() => log.add(entry(2)), 50);
    const message = (await next).value as SseMessage;
    expect([message.event, message.id]).toEqual(["audit", "2"]);
    await reader.return(undefined);
    const count = reads.length;
    log.add(entry(3));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads.length).toBe(count);
  });
});
