/**
 * The Docker Engine API the runtime serves: the calls workerd makes to run a Durable Object's
 * container and its egress sidecar, plus `/_ping` and `/version`. Paths may carry an API version
 * prefix (`/v1.43/…`), which is dropped. Answers are Docker's shapes; errors are Docker's
 * `{"message": …}` (with our `code` beside it). A call the engine does not serve answers 501
 * ENGINE_CALL_NOT_SERVED naming its method and path, is logged, and is kept in `unserved`, so an
 * upgrade of workerd or wrangler that calls something new is seen at once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { readBody } from "../../server-kit/http/body.ts";
import { Router, type Route } from "../../server-kit/http/router.ts";
import { DockerEngine, EngineError, type EngineContainer } from "./engine.ts";
import { BRIDGE_GATEWAY, SIDECAR_INGRESS_PORT, signalNumber } from "./names.ts";
import { traceCall } from "./trace.ts";

/** The Engine API version answered by /version (the oldest workerd's client reads is far below). */
export const ENGINE_API_VERSION = "1.43";

/** The bridge network workerd asks for: its gateway is where workerd's egress listener binds, so loopback. */
const BRIDGE_NETWORK = {
  Name: "bridge",
  Id: "0000000000000000000000000000000000000000000000000000000000000001",
  Driver: "bridge",
  Scope: "local",
  EnableIPv6: false,
  IPAM: { Driver: "default", Config: [{ Subnet: "10.0.2.0/24", Gateway: BRIDGE_GATEWAY }] },
};

/** Largest create body read (workerd's are a few KB). */
const MAX_BODY_BYTES = 1024 * 1024;

const createBodySchema = z.object({
  Image: z.string().default(""),
  Cmd: z.array(z.string()).nullable().optional(),
  Env: z.array(z.string()).nullable().optional(),
});

export interface EngineRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly engine: DockerEngine;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "api-version": ENGINE_API_VERSION });
  res.end(text);
}

function empty(res: ServerResponse, status: number): void {
  res.writeHead(status, { "api-version": ENGINE_API_VERSION });
  res.end();
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = (await readBody(req, MAX_BODY_BYTES)).toString();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new EngineError(400, "the request body is not JSON");
  }
}

function container(ctx: EngineRequest): EngineContainer {
  return ctx.engine.get(decodeURIComponent(ctx.params.name!));
}

function inspect(c: EngineContainer): unknown {
  const ports = c.proxy ? { [SIDECAR_INGRESS_PORT]: [{ HostIp: "127.0.0.1", HostPort: String(c.proxy.port) }] } : {};
  return {
    Id: c.id,
    Name: `/${c.name}`,
    Created: c.created,
    Image: c.image,
    State: {
      Status: c.status,
      Running: c.status === "running",
      Paused: false,
      Restarting: false,
      OOMKilled: false,
      Dead: false,
      Pid: c.run?.running ? (c.run.info().pid ?? 0) : 0,
      ExitCode: c.exitCode,
      Error: "",
      StartedAt: c.startedAt ?? "0001-01-01T00:00:00Z",
      FinishedAt: c.finishedAt ?? "0001-01-01T00:00:00Z",
    },
    Config: { Image: c.image, Cmd: c.cmd, ...(c.sidecar ? { ExposedPorts: { [SIDECAR_INGRESS_PORT]: {} } } : {}) },
    HostConfig: { NetworkMode: c.sidecar ? "bridge" : `container:${c.name}-proxy` },
    NetworkSettings: { Ports: ports },
  };
}

async function create(ctx: EngineRequest): Promise<void> {
  const name = ctx.url.searchParams.get("name");
  if (!name) throw new EngineError(400, "the engine creates named containers only (?name=)");
  const parsed = createBodySchema.safeParse(await readJson(ctx.req));
  if (!parsed.success) throw new EngineError(400, `invalid container config: ${parsed.error.issues[0]?.message ?? "bad body"}`);
  const created = ctx.engine.create(name, { image: parsed.data.Image, cmd: parsed.data.Cmd ?? [], env: parsed.data.Env ?? [] });
  json(ctx.res, 201, { Id: created.id, Warnings: [] });
}

async function start(ctx: EngineRequest): Promise<void> {
  await readBody(ctx.req, MAX_BODY_BYTES);
  const started = await ctx.engine.start(container(ctx));
  empty(ctx.res, started ? 204 : 304);
}

async function wait(ctx: EngineRequest): Promise<void> {
  const target = container(ctx);
  const status = await ctx.engine.wait(target, ctx.url.searchParams.get("condition") ?? "not-running");
  json(ctx.res, 200, { StatusCode: status, Error: null });
}

function kill(ctx: EngineRequest): void {
  const signo = signalNumber(ctx.url.searchParams.get("signal"));
  if (signo === undefined) throw new EngineError(400, `invalid signal: ${ctx.url.searchParams.get("signal")}`);
  ctx.engine.signal(container(ctx), signo);
  empty(ctx.res, 204);
}

async function remove(ctx: EngineRequest): Promise<void> {
  const force = ["1", "true"].includes(ctx.url.searchParams.get("force") ?? "");
  await ctx.engine.remove(container(ctx), force);
  empty(ctx.res, 204);
}

/**
 * The CA workerd copies into the container for intercepted HTTPS: the container already trusts its
 * sandbox's own egress authority (what GET /ca on its sidecar answers), so the file is read and dropped.
 */
async function putArchive(ctx: EngineRequest): Promise<void> {
  container(ctx);
  await readBody(ctx.req, MAX_BODY_BYTES);
  empty(ctx.res, 200);
}

function list(ctx: EngineRequest): void {
  const all = ["1", "true"].includes(ctx.url.searchParams.get("all") ?? "");
  const rows = ctx.engine
    .list()
    .filter((c) => all || c.status === "running")
    .map((c) => ({ Id: c.id, Names: [`/${c.name}`], Image: c.image, Command: c.cmd.join(" "), Created: Math.floor(Date.parse(c.created) / 1000), State: c.status, Status: c.status }));
  json(ctx.res, 200, rows);
}

function version(ctx: EngineRequest): void {
  json(ctx.res, 200, {
    Version: "edge-sandbox",
    ApiVersion: ENGINE_API_VERSION,
    MinAPIVersion: "1.24",
    Os: "linux",
    Arch: process.arch === "x64" ? "amd64" : process.arch,
    Components: [{ Name: "edge-sandbox local runtime", Version: "1" }],
  });
}

/**
 * What `docker info` reads. No security options: Miniflare reads "rootless" there as leave to give
 * containers extra privileges (FUSE), which the runtime's containers do not take.
 */
function info(ctx: EngineRequest): void {
  const containers = ctx.engine.list();
  json(ctx.res, 200, {
    ID: "edge-sandbox",
    Name: "edge-sandbox local runtime",
    ServerVersion: "edge-sandbox",
    OperatingSystem: "edge-sandbox local runtime (bubblewrap)",
    OSType: "linux",
    Architecture: process.arch === "x64" ? "x86_64" : process.arch,
    Containers: containers.length,
    ContainersRunning: containers.filter((c) => c.status === "running").length,
    ContainersPaused: 0,
    ContainersStopped: containers.filter((c) => c.status !== "running").length,
    Images: 0,
    Driver: "bubblewrap",
    SecurityOptions: [],
  });
}

export const ENGINE_ROUTES: readonly Route<EngineRequest>[] = [
  { method: "GET", path: "/_ping", handler: ({ res }) => (res.writeHead(200, { "content-type": "text/plain", "api-version": ENGINE_API_VERSION }), res.end("OK")) },
  { method: "GET", path: "/version", handler: version },
  { method: "GET", path: "/info", handler: info },
  { method: "GET", path: "/volumes", handler: ({ res }) => json(res, 200, { Volumes: [], Warnings: [] }) },
  { method: "GET", path: "/networks/bridge", handler: ({ res }) => json(res, 200, BRIDGE_NETWORK) },
  { method: "GET", path: "/containers/json", handler: list },
  { method: "POST", path: "/containers/create", handler: create },
  { method: "GET", path: "/containers/:name/json", handler: (ctx) => json(ctx.res, 200, inspect(container(ctx))) },
  { method: "POST", path: "/containers/:name/start", handler: start },
  { method: "POST", path: "/containers/:name/wait", handler: wait },
  { method: "POST", path: "/containers/:name/kill", handler: kill },
  { method: "DELETE", path: "/containers/:name", handler: remove },
  { method: "PUT", path: "/containers/:name/archive", handler: putArchive },
];

/** A call the engine does not serve, as the drift test and the log name it. */
export interface UnservedCall {
  method: string;
  path: string;
}

/** Serves the route table; what it does not serve is answered 501 and told to `unserved`. */
export function engineRequests(engine: DockerEngine, unserved: (call: UnservedCall) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const router = new Router(ENGINE_ROUTES);
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const pathname = url.pathname.replace(/^\/v\d+\.\d+(?=\/)/, "");
    const method = req.method ?? "GET";
    const match = router.match(method, pathname);
    traceCall(`engine ${method} ${url.pathname}${url.search}`, req, res);
    if (match.kind !== "found") {
      unserved({ method, path: pathname });
      req.resume();
      json(res, ERROR_CODES.ENGINE_CALL_NOT_SERVED, { message: `the local runtime's Docker engine does not serve ${method} ${pathname}`, code: "ENGINE_CALL_NOT_SERVED" });
      return;
    }
    void (async () => {
      try {
        await match.handler({ req, res, url, params: match.params, engine });
      } catch (error) {
        if (res.headersSent) return void res.destroy();
        if (error instanceof EngineError) json(res, error.status, { message: error.message });
        else {
          // workerd shows a failed start only as a failed start: the reason is told here too.
          const message = (error as Error).message ?? String(error);
          const tail = (error as { logTail?: string }).logTail;
          console.error(`runtime: the Docker engine's ${method} ${pathname} failed: ${message}${tail ? `\n${tail}` : ""}`);
          json(res, 500, { message });
        }
      }
    })();
  };
}
