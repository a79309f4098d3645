/**
 * For the code interpreter tests: a server with code contexts, small clients for the /api/code
 * routes, streamed runs (with the time each event arrived, or held open until the test has seen its
 * events), and a look inside PNG results.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { CodeContext, CodeEvent, CodeLanguage, Execution } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { call, type JsonReply } from "./helpers.ts";
import type { SandboxServer } from "./sandbox-helpers.ts";

export async function createContext(sandbox: SandboxServer, body: { language?: CodeLanguage; cwd?: string; env?: Record<string, string>; sessionId?: string } = {}): Promise<CodeContext> {
  const reply = await sandbox.post("/api/code/contexts", body);
  if (reply.status !== 200) throw new Error(`create context failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.context as CodeContext;
}

/** A buffered run; fails the test unless the call itself succeeded. */
export async function run(sandbox: SandboxServer, contextId: string | undefined, code: string, extra: Record<string, unknown> = {}): Promise<Execution> {
  const reply = await sandbox.post("/api/code/run", { code, ...(contextId ? { contextId } : {}), ...extra });
  if (reply.status !== 200) throw new Error(`run failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as Execution;
}

export function runReply(sandbox: SandboxServer, body: unknown): Promise<JsonReply> {
  return call(sandbox.url, "POST", "/api/code/run", body);
}

export type TimedEvent = CodeEvent & { at: number };

/** A streamed run's events, each with the milliseconds from the request to its arrival. */
export async function streamRun(url: string, body: unknown, path = "/api/code/run/stream", headers: Record<string, string> = {}): Promise<TimedEvent[]> {
  const started = performance.now();
  const init: RequestInit = body === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(url + path, init);
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status} ${await response.text()}`);
  const events: TimedEvent[] = [];
  for await (const event of readEventStream<CodeEvent>(response.body)) events.push({ ...event, at: performance.now() - started });
  return events;
}

/**
 * A streamed run whose cell waits for a gate (a file in the workspace, its path in `gate`) before it
 * ends; the gate is opened once `seen` says what should arrive mid-cell has. Output held back until
 * the cell's end is never seen, so such a run never ends and the test times out.
 */
export async function streamRunGated(sandbox: SandboxServer, body: { contextId: string; code: (gate: string) => string }, seen: (events: CodeEvent[]) => boolean): Promise<CodeEvent[]> {
  const gate = join(sandbox.workspace, `gate-${randomUUID()}`);
  const response = await fetch(`${sandbox.url}/api/code/run/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contextId: body.contextId, code: body.code(gate) }),
  });
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status} ${await response.text()}`);
  const events: CodeEvent[] = [];
  let opened = false;
  for await (const event of readEventStream<CodeEvent>(response.body)) {
    events.push(event);
    if (!opened && seen(events)) {
      opened = true;
      await sandbox.exec({ command: `touch ${gate}` });
    }
  }
  return events;
}

/** Width and height from a base64 PNG's IHDR, after checking its signature. */
export function pngSize(base64: string): { width: number; height: number; bytes: number } {
  const bytes = Buffer.from(base64, "base64");
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) throw new Error("not a PNG");
  if (bytes.toString("latin1", 12, 16) !== "IHDR") throw new Error("PNG without IHDR first");
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), bytes: bytes.length };
}

/** The text of a run's stdout. */
export const stdoutText = (execution: Execution) => execution.logs.stdout.join("");
export const mainResult = (execution: Execution) => execution.results.find((result) => result.isMainResult);
