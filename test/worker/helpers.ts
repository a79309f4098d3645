/** Shared bits of the workers tests: unique sandbox ids, the runtime's view of a container. */
import { env, exports } from "cloudflare:workers";
import { inject } from "vitest";
import type { RuntimeContainerInfo } from "../../protocol/runtime.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { SandboxClient } from "../../src/client/sandbox-client.ts";
import type { GetSandboxOptions } from "../../src/client/get-sandbox.ts";
import type { SandboxRpc } from "../../src/rpc/sandbox-rpc.ts";
import type { StreamResumeRequest } from "../../src/rpc/processes.ts";
import { rpcTransport } from "../../src/rpc/stub-transport.ts";

let counter = 0;
const run = Math.random().toString(36).slice(2, 8);

/** A fresh sandbox id per call, so tests never share a container. */
export function uniqueId(label: string): string {
  return `${label}-${run}-${++counter}`;
}

export function freshSandbox(label: string, options?: GetSandboxOptions): SandboxClient {
  return getSandbox(env.Sandbox, uniqueId(label), options);
}

/** A call to the local runtime's API with its secret, as the Durable Object makes them. */
export function runtimeFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${inject("runtimeSecret")}`);
  return fetch(`${inject("runtimeUrl")}${path}`, { ...init, headers });
}

/** What the local runtime says about a sandbox's container (independent of the Durable Object). */
export async function runtimeState(sandboxId: string): Promise<RuntimeContainerInfo> {
  const response = await runtimeFetch(`/containers/${sandboxId}`);
  return (await response.json()) as RuntimeContainerInfo;
}

/** The test runtimes a sandbox's container may run under (global-setup.ts); "none": no engine answers. */
export type TestRuntime = "main" | "noBwrap" | "bwrapOnly" | "oneOnly" | "ephemeral" | "none";

/**
 * Runs the sandbox's container through another test runtime's Docker engine from its next start
 * (engine-router.ts): workerd's own client still makes every call, to that engine.
 */
export async function sendToRuntime(sandboxId: string, runtime: TestRuntime): Promise<void> {
  const objectId = env.Sandbox.idFromName(sandboxId).toString();
  const response = await fetch(`${inject("engineRouterUrl")}/routes/${objectId}?key=${encodeURIComponent(sandboxId)}`, { method: "PUT", body: runtime });
  if (response.status !== 204) throw new Error(`the engine router refused ${runtime}: ${response.status} ${await response.text()}`);
}

/** Polls `check` until it returns true or `timeoutMs` passes (for state only observable by asking). */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function collect<T>(iterable: AsyncIterable<T>, limit = Number.POSITIVE_INFINITY): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

/** Fresh sandboxes that are all destroyed at the end (`afterAll(sandboxes.destroyAll)`). */
export function sandboxPool(): { create(label: string, options?: GetSandboxOptions): SandboxClient; destroyAll(): Promise<void> } {
  const made: SandboxClient[] = [];
  return {
    create(label, options) {
      const sandbox = freshSandbox(label, options);
      made.push(sandbox);
      return sandbox;
    },
    async destroyAll() {
      await Promise.all(made.splice(0).map((sandbox) => sandbox.destroy().catch(() => undefined)));
    },
  };
}

/** SHA-256 of a byte stream, hex (workerd's DigestStream: the bytes are never held together). */
export async function sha256Hex(stream: ReadableStream<Uint8Array>): Promise<{ hex: string; bytes: number }> {
  const digest = new crypto.DigestStream("SHA-256");
  let bytes = 0;
  const counted = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  await counted.pipeTo(digest);
  const hex = [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { hex, bytes };
}

/** A deterministic byte stream of `size` bytes in `chunkSize` chunks (generated as it is read). */
export function patternStream(size: number, chunkSize = 256 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= size) return controller.close();
      const length = Math.min(chunkSize, size - sent);
      const chunk = new Uint8Array(length);
      for (let i = 0; i < length; i++) chunk[i] = ((sent + i) * 31 + ((sent + i) >> 12)) & 0xff;
      sent += length;
      controller.enqueue(chunk);
    },
  });
}

/** A request to the Worker's /v1 API (bearer token set unless the caller sets authorization; `json` becomes the body). */
export function apiCall(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${env.SANDBOX_API_TOKEN}`);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  const { json: _json, ...rest } = init;
  return worker.fetch(new Request(`http://sandbox.test${path}`, { ...rest, headers, body: body ?? null }));
}

/** A body that delivers the first `bytes` bytes of `body` and then fails like a dropped connection. */
export function cutAfter(body: ReadableStream<Uint8Array>, bytes: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      const room = bytes - sent;
      controller.enqueue(value.slice(0, Math.max(0, room)));
      sent += value.length;
      if (sent >= bytes) {
        await reader.cancel();
        controller.error(new TypeError("network connection lost (test)"));
      }
    },
  });
}

/**
 * A sandbox client over Workers RPC whose first stream from `method` breaks after `bytes` bytes (the
 * client cancels the RPC stream); every resume call is logged with its `since`.
 */
export function brokenRpcSandbox(label: string, method: "execStream" | "streamProcessLogs", bytes: number, resumes: string[]): SandboxClient {
  const id = uniqueId(label);
  const rpc = rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id)));
  let cut = false;
  const once = async (stream: Promise<ReadableStream<Uint8Array>>) => {
    if (cut) return stream;
    cut = true;
    return cutAfter(await stream, bytes);
  };
  const broken: SandboxRpc = {
    ...rpc,
    execStream: (command, options) => (method === "execStream" ? once(rpc.execStream(command, options)) : rpc.execStream(command, options)),
    resumeExecStream: (processId, options?: StreamResumeRequest) => {
      resumes.push(`resumeExecStream ${options?.since}`);
      return rpc.resumeExecStream(processId, options);
    },
    streamProcessLogs: (processId, options?: StreamResumeRequest) => {
      if (method === "streamProcessLogs" && !cut) return once(rpc.streamProcessLogs(processId, options));
      resumes.push(`streamProcessLogs ${options?.since}`);
      return rpc.streamProcessLogs(processId, options);
    },
  };
  return new SandboxClient(id, { rpc: broken });
}

/** A command that prints `line-1` … `line-<count>` a little apart (long enough to cut its stream midway). */
export const countingCommand = (count: number) => `for i in $(seq 1 ${count}); do echo line-$i; sleep 0.005; done`;
/** What countingCommand prints. */
export const countedLines = (count: number) => Array.from({ length: count }, (_, i) => `line-${i + 1}\n`).join("");
/** The stdout of a list of events, joined. */
export const stdoutOf = (events: { type: string; data?: string }[]) => events.flatMap((e) => (e.type === "stdout" ? [e.data ?? ""] : [])).join("");

/** A SandboxRpc whose streams break: the n-th stream opened (from 0) is cut after `cutAfterBytes(n)` bytes. */
export interface CuttingRpc {
  rpc: SandboxRpc;
  /** Every stream opened, in order: method and resume point. */
  opened: string[];
  /** While true, opening a stream fails like an unreachable network. */
  down: boolean;
}

export function cuttingRpc(rpc: SandboxRpc, cutAfterBytes: (n: number) => number | undefined): CuttingRpc {
  const state: CuttingRpc = { rpc, opened: [], down: false };
  const cut = async (label: string, stream: () => Promise<ReadableStream<Uint8Array>>) => {
    if (state.down) throw new TypeError("network connection lost (test)");
    const bytes = cutAfterBytes(state.opened.length);
    state.opened.push(label);
    const body = await stream();
    return bytes === undefined ? body : cutAfter(body, bytes);
  };
  state.rpc = {
    ...rpc,
    execStream: (command, options) => cut("execStream", () => rpc.execStream(command, options)),
    resumeExecStream: (id, options = {}) => cut(`resumeExecStream ${JSON.stringify(options)}`, () => rpc.resumeExecStream(id, options)),
    streamProcessLogs: (id, options = {}) => cut(`streamProcessLogs ${JSON.stringify(options)}`, () => rpc.streamProcessLogs(id, options)),
  };
  return state;
}

/** A fetch whose n-th event-stream response (from 0) is cut after `cutAfterBytes(n)` bytes. */
export function cuttingFetch(base: typeof fetch, cutAfterBytes: (n: number) => number | undefined, opened: string[] = []): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await base(request);
    if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) return response;
    const bytes = cutAfterBytes(opened.length);
    opened.push(`${new URL(request.url).pathname}${new URL(request.url).search} ${request.headers.get("last-event-id") ?? "-"}`);
    return bytes === undefined ? response : new Response(cutAfter(response.body, bytes), response);
  };
}

/**
 * The event ids of a resumed stream, each once. An id comes twice only for an output event cut in
 * the middle (its two parts, one after the other); anything else — a repeat further on, ids out of
 * order — is left in, for the test's expectation to catch.
 */
export function eventIds(events: { seq?: number | undefined }[]): number[] {
  const ids: number[] = [];
  for (const event of events) if (event.seq !== undefined && event.seq !== ids.at(-1)) ids.push(event.seq);
  return ids;
}
