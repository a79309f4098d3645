/**
 * `POST /api/port-watch {port, mode, path, statusMin, statusMax, processId?, interval}`: Server-Sent
 * Events for Cloudflare's `waitForPort`: `watching`, then `ready` (with the HTTP status) once the port
 * answers, `process_exited` (with its exit code) if the watched process ends first, or `error`.
 *
 * The port is probed from inside the sandbox, by a command of our engine (protocol/ports.ts, the
 * probe our own client's waitForPort runs), because under isolation the sandbox's network may not
 * be the server's. The probe is killed as soon as the answer is known or the reader goes away.
 */
import type { ServerResponse } from "node:http";
import * as z from "zod";
import { LIMITS } from "../../../../protocol/limits.ts";
import { httpProbeCommand, tcpProbeCommand } from "../../../../protocol/ports.ts";
import { formatSseEvent, KEEPALIVE_FRAME, SSE_HEADERS } from "../../../../protocol/sse.ts";
import { execResultOf } from "../../../engine/exec.ts";
import type { ManagedProcess } from "../../../engine/managed-process.ts";
import { execSpec } from "../../../engine/options.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";
import { lazySchema } from "../../../../protocol/lazy-schema.ts";

const portWatchRequestSchema = lazySchema(() => z.object({
  port: z.number().int().min(1).max(65535),
  mode: z.enum(["http", "tcp"]).default("http"),
  /** Printable ASCII without spaces: it goes into the request line as it is. */
  path: z.string().regex(/^[\x21-\x7e]{0,2048}$/, "path is printable ASCII without spaces").default("/"),
  statusMin: z.number().int().min(100).max(599).default(200),
  statusMax: z.number().int().min(100).max(599).default(399),
  processId: z.string().min(1).optional(),
  /** Milliseconds between attempts, kept within 100 ms … 10 s as theirs does. */
  interval: z.number().default(500).transform((ms) => Math.max(100, Math.min(ms, 10_000))),
}));
type PortWatchRequest = z.output<typeof portWatchRequestSchema>;

/** An address, not `localhost`: a container's /etc/hosts may be empty, and the probe must not depend on it. */
const PROBE_HOST = "127.0.0.1";

function probeCommand(request: PortWatchRequest): string {
  if (request.mode === "tcp") return tcpProbeCommand(PROBE_HOST, request.port, request.interval);
  const path = request.path.startsWith("/") ? request.path : `/${request.path}`;
  return httpProbeCommand(PROBE_HOST, request.port, path, request.statusMin, request.statusMax, request.interval);
}

function send(res: ServerResponse, event: { type: string } & Record<string, unknown>): void {
  if (!res.writableEnded) res.write(formatSseEvent(event));
}

type Outcome = { kind: "probed"; record: ManagedProcess } | { kind: "exited"; record: ManagedProcess } | { kind: "gone" };

async function watchPort(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, portWatchRequestSchema);
  const { processes, limits } = ctx.server;
  // An unknown process is PROCESS_NOT_FOUND before the stream starts.
  const watched = request.processId === undefined ? undefined : processes.get(request.processId);
  const probe = await processes.launch(execSpec({ command: probeCommand(request), isolated: true }, limits, "buffered"));
  const { res } = ctx;
  res.writeHead(200, SSE_HEADERS);
  const { port } = request;
  send(res, { type: "watching", port });
  const keepalive = setInterval(() => res.write(KEEPALIVE_FRAME), LIMITS.keepaliveMs);
  const gone = new Promise<Outcome>((resolve) => {
    res.once("close", () => resolve({ kind: "gone" }));
    ctx.server.shutdown.addEventListener("abort", () => resolve({ kind: "gone" }), { once: true });
  });
  try {
    const outcome = await Promise.race<Outcome>([
      probe.finished.then(() => ({ kind: "probed", record: probe })),
      ...(watched ? [watched.finished.then((): Outcome => ({ kind: "exited", record: watched }))] : []),
      gone,
    ]);
    if (outcome.kind === "probed") {
      const result = execResultOf(outcome.record);
      if (result.success) send(res, { type: "ready", port, ...(request.mode === "http" ? { statusCode: Number(result.stdout.trim()) } : {}) });
      else send(res, { type: "error", port, error: `the port probe ended with exit code ${result.exitCode}: ${result.stderr.trim()}` });
    } else if (outcome.kind === "exited") {
      send(res, { type: "process_exited", port, exitCode: outcome.record.exit?.exitCode });
    }
  } finally {
    clearInterval(keepalive);
    probe.kill("SIGKILL");
    probe.releaseCapture();
    res.end();
  }
}

export const cloudflarePortRoutes: Route[] = [cloudflareRoute("POST", CLOUDFLARE_ROUTES.portWatch, watchPort)];
