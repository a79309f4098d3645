/**
 * startServer: the container process server on node:http. Used by `npm run container` (main.ts),
 * by tests and benchmarks (in-process, port 0) and by the local container runtime.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { resolveLimits, type ServerLimits } from "./config.ts";
import { DEFAULT_PATH, setBaseEnv } from "./engine/environment.ts";
import { ProcessTable } from "./engine/process-table.ts";
import { sendError, sendErrorCode } from "./http/response.ts";
import { Router } from "./http/router.ts";
import { ROUTE_GROUPS } from "./http/routes/index.ts";
import type { RouteGroup, ServerContext } from "./http/types.ts";
import type { SandboxOptions } from "./services/options.ts";

/** Isolation (`isolation: "bwrap"`, `allowNetwork`, …), file limits and state dir: see SandboxOptions. */
export interface StartServerOptions extends SandboxOptions {
  /** Default 3000; 0 lets the OS pick. */
  port?: number;
  /** Default 127.0.0.1 (the image sets 0.0.0.0). */
  host?: string;
  /** Created if missing. Default `.sandbox/workspace`. */
  workspace?: string;
  /** HOME of commands. Default: the workspace. */
  home?: string;
  limits?: Partial<ServerLimits>;
  /** Route groups to mount (default: all of ROUTE_GROUPS). */
  routeGroups?: readonly RouteGroup[];
}

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  workspace: string;
  context: ServerContext;
  /** Stops listening, ends open streams, kills every process. */
  close(): Promise<void>;
}

/**
 * node:http through require, not an ESM import: an ESM import copies every export of the module, and
 * one of them (http.WebSocket) loads undici on first read — ~2 MB of heap and ~10 MB resident that
 * every spawn then pays for, since forking costs in proportion to the server's resident memory.
 */
const { createServer } = createRequire(import.meta.url)("node:http") as typeof import("node:http");

const VERSION = readVersion();

export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const workspace = resolve(options.workspace ?? ".sandbox/workspace");
  mkdirSync(workspace, { recursive: true });
  const limits = resolveLimits(options.limits);
  setBaseEnv({
    PATH: process.env.PATH || DEFAULT_PATH,
    HOME: resolve(options.home ?? workspace),
    LANG: process.env.LANG || "C.UTF-8",
  });

  const shutdown = new AbortController();
  const context: ServerContext = {
    processes: new ProcessTable(workspace, limits),
    workspace,
    limits,
    instanceId: randomUUID(),
    startedAt: Date.now(),
    version: VERSION,
    shutdown: shutdown.signal,
    sandbox: options,
  };

  const router = new Router();
  const teardowns: (() => void | Promise<void>)[] = [];
  for (const group of options.routeGroups ?? ROUTE_GROUPS) {
    for (const route of group.routes) router.add(route);
    const teardown = group.setup?.(context);
    if (teardown) teardowns.push(teardown);
  }

  const server = createServer({ keepAliveTimeout: 65_000, noDelay: true }, (req, res) => {
    void handle(router, context, req, res);
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });

  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, host, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    host,
    workspace,
    context,
    close: () =>
      (closing ??= (async () => {
        shutdown.abort();
        const closed = new Promise<void>((done) => server.close(() => done()));
        server.closeIdleConnections();
        await context.processes.close();
        for (const teardown of teardowns.reverse()) await teardown();
        server.closeAllConnections();
        await closed;
      })()),
  };
}

async function handle(router: Router, server: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? "/", "http://container");
    const match = router.match(req.method ?? "GET", url.pathname);
    if (match.kind === "not-found") {
      sendErrorCode(res, "NOT_FOUND", `no route for ${req.method} ${url.pathname}`);
      return;
    }
    if (match.kind === "method-not-allowed") {
      sendErrorCode(res, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${url.pathname}`, { allowed: match.allowed }, {
        allow: match.allowed.join(", "),
      });
      return;
    }
    await match.handler({ req, res, url, params: match.params, server });
  } catch (error) {
    sendError(res, error);
  }
}

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
