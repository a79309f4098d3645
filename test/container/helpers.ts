/**
 * Test client for the container server: start it in-process on a free port with a temp workspace,
 * call routes with fetch, read SSE streams with the protocol's own parser, inspect process groups.
 * Under `npm run test:image` (SANDBOX_TEST_IMAGE set) a server with default settings is the built
 * image's instead (image-server.ts).
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEventStream, readSseStream, type SseMessage } from "../../protocol/sse.ts";
import type { ServerLimits } from "../../container/config.ts";
import { startServer, type RunningServer } from "../../container/server.ts";
import { startImageServer, testImage, type ImageServer } from "./image-server.ts";

export interface TestServer {
  server: RunningServer;
  url: string;
  workspace: string;
  /** HOME of commands: the workspace, unless the server is configured with another (the image's is /root). */
  home: string;
  close(): Promise<void>;
}

export async function startTestServer(limits: Partial<ServerLimits> = {}): Promise<TestServer> {
  const image = testImage();
  if (image) return withoutInProcessServer(await startImageServer(image), Object.keys(limits));
  const workspace = mkdtempSync(join(tmpdir(), "sandbox-test-"));
  const server = await startServer({ port: 0, host: "127.0.0.1", workspace, limits });
  return {
    server,
    url: server.url,
    workspace,
    home: workspace,
    async close() {
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/**
 * An image's server as a test server. It runs with the image's settings: a test that needs others, or
 * reaches into the in-process server, cannot run against it and fails saying so.
 */
export function withoutInProcessServer<T extends ImageServer>(image: T, settings: string[]): T & { server: RunningServer } {
  if (settings.length > 0) {
    void image.close();
    throw new Error(`the image's server runs with the image's settings; this test sets ${settings.join(", ")}`);
  }
  return Object.defineProperty(image, "server", {
    get(): never {
      throw new Error("the image's server runs in its own process: this test needs an in-process server");
    },
  }) as T & { server: RunningServer };
}

export interface JsonReply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request; `secret` is sent as the bearer a server started with one answers to. */
export async function call<T = any>(url: string, method: string, path: string, body?: unknown, secret?: string): Promise<JsonReply<T>> {
  const headers: Record<string, string> = secret === undefined ? {} : { authorization: `Bearer ${secret}` };
  const init: RequestInit = { method, headers };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    headers["content-type"] = "application/json";
  }
  const response = await fetch(url + path, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** Opens an SSE stream (POST with a body, or GET). Throws when the reply is not a stream. */
export async function openStream(url: string, path: string, options: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  const init: RequestInit = { method: options.body === undefined ? "GET" : "POST", headers: { ...options.headers } };
  if (options.signal) init.signal = options.signal;
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const response = await fetch(url + path, init);
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status} ${await response.text()}`);
  return response;
}

/** Every event of a stream until it ends. */
export async function collectEvents<T = any>(response: Response): Promise<T[]> {
  const events: T[] = [];
  for await (const event of readEventStream<T>(response.body!)) events.push(event);
  return events;
}

/** Raw SSE messages (id/event/data) until the stream ends. */
export async function collectMessages(response: Response): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readSseStream(response.body!)) messages.push(message);
  return messages;
}

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
}

/** Every process on the machine, from /proc. */
export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command name (which may contain spaces) start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(name), state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]) });
    } catch {
      // the process went away while we looked
    }
  }
  return out;
}

/**
 * Processes of group `pgid` that are still alive. A zombie is dead: one whose parent is this test
 * process (the server's own child) would be a reaping bug and counts; orphans are init's to reap.
 */
export function groupMembers(pgid: number): number[] {
  return processes()
    .filter((p) => p.pgid === pgid && (p.state !== "Z" || p.ppid === process.pid))
    .map((p) => p.pid);
}

/** Zombies whose parent is this process (the in-process server): must always be none. */
export function ownZombies(): number[] {
  return processes().filter((p) => p.state === "Z" && p.ppid === process.pid).map((p) => p.pid);
}

/** Polls `check` until it returns true (bounded). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, stepMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/** A server started as a child process: its URL once it says where it listens, and what it wrote to stderr. */
export function listeningUrl(child: ChildProcess): { url: Promise<string>; stderr: () => string } {
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const url = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { url, stderr: () => stderr };
}
