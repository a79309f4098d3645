/**
 * The local container runtime: an HTTP service on loopback that the Sandbox Durable Object's
 * stand-in `ctx.container` calls to start, watch, signal and destroy one container server per
 * sandbox (routes in protocol/runtime.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { errorBody, type ErrorCode } from "../protocol/errors.ts";
import { isValidSandboxId } from "../protocol/sandbox.ts";
import type { RuntimeHealth, RuntimeStartRequest } from "../protocol/runtime.ts";
import { RUNTIME_EXIT_POLL_MAX_MS } from "../protocol/runtime.ts";
import { isolationRequestSchema, type IsolationMode } from "../protocol/isolation.ts";
import { detectIsolation } from "../container/isolation/detect.ts";
import { reapLeftovers } from "./container-process.ts";
import { directLauncher, parseIsolationMode, type Launcher } from "./launch.ts";
import { ContainerPool } from "./pool.ts";
import { startRefusalOf } from "./start-failure.ts";

export interface RuntimeOptions {
  port?: number;
  host?: string;
  /** Where sandboxes keep their folders (default `.sandbox` in the working directory). */
  dataDir?: string;
  /** Isolation of the commands of sandboxes that ask for none: "none" (default) or "bwrap" (SANDBOX_ISOLATION). */
  isolation?: IsolationMode | string;
  /** bubblewrap binary the container servers use (default SANDBOX_BWRAP_PATH, else `bwrap` on PATH). */
  bwrapPath?: string;
  /** How container servers are launched (default: plain child processes). */
  launcher?: Launcher;
  startTimeoutMs?: number;
  stopGraceMs?: number;
}

export interface RunningRuntime {
  url: string;
  port: number;
  dataDir: string;
  pool: ContainerPool;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly code: ErrorCode;
  readonly context: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, context?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.context = context;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new HttpError("PAYLOAD_TOO_LARGE", "runtime request bodies are limited to 1 MiB");
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new HttpError("INVALID_JSON", "request body is not JSON");
  }
}

function startRequest(body: unknown): RuntimeStartRequest {
  if (typeof body !== "object" || body === null) throw new HttpError("INVALID_REQUEST", "start body must be an object");
  const { env, enableInternet, isolation } = body as Record<string, unknown>;
  if (env !== undefined) {
    const valid =
      typeof env === "object" && env !== null && Object.values(env).every((value) => typeof value === "string");
    if (!valid) throw new HttpError("INVALID_REQUEST", "env must map names to strings");
  }
  const parsed = isolationRequestSchema.optional().safeParse(isolation);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError("INVALID_REQUEST", `invalid isolation: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim());
  }
  return {
    env: env as Record<string, string> | undefined,
    enableInternet: typeof enableInternet === "boolean" ? enableInternet : true,
    ...(parsed.data === undefined ? {} : { isolation: parsed.data }),
  };
}

export async function startRuntime(options: RuntimeOptions = {}): Promise<RunningRuntime> {
  const dataDir = resolve(options.dataDir ?? ".sandbox");
  mkdirSync(dataDir, { recursive: true });
  const leftovers = readdirSync(dataDir)
    .map((name) => join(dataDir, name, "container.pid"))
    .filter((file) => existsSync(file));
  const reaped = reapLeftovers(leftovers);
  if (reaped > 0) console.warn(`runtime: stopped ${reaped} container server(s) left over from an earlier run`);

  const isolation = parseIsolationMode(options.isolation);
  const bwrapPath = options.bwrapPath ?? (process.env.SANDBOX_BWRAP_PATH || undefined);
  const pool = new ContainerPool({
    dataDir,
    isolation: { mode: isolation, ...(bwrapPath === undefined ? {} : { bwrapPath }) },
    launcher: options.launcher ?? directLauncher,
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    ...(options.stopGraceMs === undefined ? {} : { stopGraceMs: options.stopGraceMs }),
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://runtime");
    const method = req.method ?? "GET";
    if (url.pathname === "/health" && method === "GET") {
      const health: RuntimeHealth = { status: "ok", containers: pool.size, isolation, dataDir };
      return send(res, 200, health);
    }
    if (url.pathname === "/isolation" && method === "GET") {
      return send(res, 200, detectIsolation(bwrapPath === undefined ? {} : { bwrapPath }));
    }
    const match = /^\/containers\/([^/]+)(\/start|\/exit|\/signal)?$/.exec(url.pathname);
    if (!match) throw new HttpError("NOT_FOUND", `no route for ${method} ${url.pathname}`);
    const key = decodeURIComponent(match[1]!);
    if (!isValidSandboxId(key)) throw new HttpError("INVALID_SANDBOX_ID", `invalid container key "${key}"`);
    const action = match[2] ?? "";

    if (action === "/start" && method === "POST") {
      const request = startRequest(await readJson(req));
      try {
        const container = await pool.start(key, request);
        return send(res, 200, container.info());
      } catch (error) {
        const logTail = (error as { logTail?: string }).logTail;
        const refusal = logTail ? startRefusalOf(logTail) : undefined;
        if (refusal) throw new HttpError(refusal.code, refusal.message, { logTail });
        throw new HttpError("CONTAINER_UNAVAILABLE", (error as Error).message, logTail ? { logTail } : undefined);
      }
    }
    if (action === "/exit" && method === "GET") {
      const waitMs = Math.min(Math.max(Number(url.searchParams.get("waitMs") ?? 0) || 0, 0), RUNTIME_EXIT_POLL_MAX_MS);
      const runId = url.searchParams.get("runId") ?? undefined;
      return send(res, 200, await pool.waitForExit(key, runId, waitMs));
    }
    if (action === "/signal" && method === "POST") {
      const { signal } = (await readJson(req)) as { signal?: unknown };
      if (typeof signal !== "number" || !Number.isInteger(signal) || signal < 1 || signal > 64) {
        throw new HttpError("INVALID_SIGNAL", "signal must be a signal number");
      }
      return send(res, 200, pool.signal(key, signal));
    }
    if (action === "" && method === "GET") return send(res, 200, pool.info(key));
    if (action === "" && method === "DELETE") return send(res, 200, await pool.destroy(key));
    throw new HttpError("METHOD_NOT_ALLOWED", `${method} not allowed on ${url.pathname}`);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      const known = error instanceof HttpError;
      const body = errorBody(
        known ? error.code : "INTERNAL_ERROR",
        error instanceof Error ? error.message : String(error),
        known ? error.context : undefined,
      );
      if (!res.headersSent) send(res, body.httpStatus, body);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolveListen());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const host = options.host ?? "127.0.0.1";

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    dataDir,
    pool,
    close() {
      closing ??= (async () => {
        // Containers first, so monitors waiting on /exit learn that they stopped; then the server.
        await pool.stopAll();
        await new Promise((resolve) => setTimeout(resolve, 50));
        server.close();
        server.closeAllConnections();
      })();
      return closing;
    },
  };
}
