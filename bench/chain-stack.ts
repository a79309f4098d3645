/**
 * For the chain benchmarks: `npm start`'s stack (scripts/start.ts: local runtime + wrangler dev) on
 * free ports, and plain keep-alive HTTP helpers that cost the client as little as possible.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../runtime/ports.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

export interface Stack {
  url: string;
  token: string;
  runtimeUrl: string;
  /** The runtime's secret (chosen here, so the benchmark can address container servers directly). */
  runtimeSecret: string;
  /** The stack's process (the runtime runs in it; container servers are its descendants). */
  pid: number;
  close(): Promise<void>;
}

/**
 * `env`: settings of the stack beyond the benchmark's own (e.g. SANDBOX_WARM_POOL); `onStderr`: each
 * line the stack writes on stderr once it is up (e.g. the engine's trace).
 */
export async function startStack(env: Record<string, string> = {}, onStderr?: (line: string) => void): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-chain-bench-"));
  // Sandboxes run as containers under bwrap pass through (never list) the folder to their own.
  chmodSync(dir, 0o711);
  const port = await freePort();
  const runtimePort = await freePort();
  const token = "bench-token-0123456789";
  const runtimeSecret = randomBytes(32).toString("base64url");
  const child: ChildProcess = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      RUNTIME_PORT: String(runtimePort),
      SANDBOX_API_TOKEN: token,
      SANDBOX_RUNTIME_SECRET: runtimeSecret,
      // The chain is measured, not confinement (that is the isolation benchmark).
      SANDBOX_ISOLATION: "none",
      SANDBOX_DATA_DIR: join(dir, "sandboxes"),
      WRANGLER_PERSIST_TO: join(dir, "state"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stack not ready:\n${output}`)), 120_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Sandbox service ready")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`stack exited (${code}):\n${output}`)));
  });
  if (onStderr) {
    let partial = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) onStderr(line);
    });
  }
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    runtimeUrl: `http://127.0.0.1:${runtimePort}`,
    runtimeSecret,
    pid: child.pid!,
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGINT");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export interface Reply {
  status: number;
  body: string;
  bytes: number;
}

/**
 * One HTTP request over the keep-alive agent. `discard` counts body bytes without keeping them.
 *
 * workerd closes a keep-alive connection after about 15 s without a request, and says nothing of it
 * beforehand. A client that was busy when the close came (a synchronous step, a loaded machine) can
 * still hand the next request to that socket, which then ends before any answer: "socket hang up".
 * The server never read such a request, so it is sent again once, on a fresh connection.
 */
export async function send(url: string, method: string, body: unknown, headers: Record<string, string> = {}, discard = false): Promise<Reply> {
  try {
    return await sendOnce(url, method, body, headers, discard);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    return sendOnce(url, method, body, headers, discard);
  }
}

/** A request written to a reused keep-alive connection that the server had already closed. */
class StaleSocketError extends Error {}

function sendOnce(url: string, method: string, body: unknown, headers: Record<string, string>, discard: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let answered = false;
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          ...headers,
          ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          if (!discard) chunks.push(chunk);
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), bytes }));
        res.on("error", reject);
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && !answered && (error.code === "ECONNRESET" || error.code === "EPIPE");
      reject(stale ? new StaleSocketError(error.message, { cause: error }) : error);
    });
    req.end(payload);
  });
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
