/**
 * Tunnels through the Bridge API are our preview ports: `POST /v1/sandbox/:id/tunnel/:port {name?}`
 * exposes the port (or answers the one already exposed) as the Bridge's `Tunnel`
 * `{id, port, url, hostname, createdAt, name?}`; `DELETE` unexposes it (204, also when it was not).
 * A tunnel's id names one exposure: after the port is unexposed or the sandbox destroyed, the next
 * tunnel of the port has a new one (and a new token); one exposed again after a restart keeps it.
 * The URL is private like every preview URL: it carries the port's token, so it opens in a browser
 * and answers a program's requests as it is, while the bare address refuses strangers.
 *
 * Port resolution, which the Bridge lacks and agent SDKs need to reach a server in the sandbox:
 * `GET /v1/sandbox/:id/tunnel/:port` answers the tunnel of a port the running container serves, and
 * 404 `port_not_exposed` for one it does not (never exposed, or exposed in an earlier container), without exposing anything; `GET /v1/sandbox/:id/tunnel`
 * lists them. Reading never wakes a sleeping container.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { ExposedPort } from "../../rpc/ports.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { SandboxRpc } from "../../rpc/sandbox-rpc.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

const tunnelRequestSchema = z.object({ name: z.string().min(1).max(63).optional() });

/** The Bridge's Tunnel. */
export interface BridgeTunnel {
  id: string;
  /** The port inside the sandbox. */
  port: number;
  /** Where it is reached, with its token in the query unless the port is public. */
  url: string;
  hostname: string;
  createdAt: string;
  name?: string;
}

/** A path segment as a port number (anything else stays as it is, for the Durable Object to refuse as INVALID_PORT). */
function portNumber(segment: string): number {
  return /^\d{1,6}$/.test(segment) ? Number(segment) : (segment as unknown as number);
}

/** The tunnel's id: the port's exposure, known by when it began (kept while the port stays exposed). */
function tunnelId(sandboxId: string, exposed: ExposedPort): string {
  return `${sandboxId}-${exposed.port}-${Date.parse(exposed.exposedAt).toString(36)}`;
}

function tunnelOf(sandboxId: string, exposed: ExposedPort, origin: string): BridgeTunnel {
  const url = new URL(exposed.url, origin);
  return {
    id: tunnelId(sandboxId, exposed),
    port: exposed.port,
    url: url.href,
    hostname: url.host,
    createdAt: exposed.exposedAt,
    ...(exposed.name === undefined ? {} : { name: exposed.name }),
  };
}

/**
 * The port's tunnel: the one the running container serves, else the port exposed (again) in it —
 * exposing is idempotent, so a concurrent request gets the same tunnel.
 */
export async function openTunnel(sandbox: SandboxRpc, sandboxId: string, port: number, origin: string, name?: string): Promise<BridgeTunnel> {
  const exposed =
    (await sandbox.getExposedPorts({ origin })).find((entry) => entry.port === port) ??
    (await sandbox.exposePort(port, { origin, ...(name === undefined ? {} : { name }) }));
  return tunnelOf(sandboxId, exposed, origin);
}

export const bridgeTunnelRoutes = new Hono<ApiEnv>()
  .get("/tunnel", async (c) => {
    const origin = new URL(c.req.url).origin;
    const exposed = await c.var.sandbox.getExposedPorts({ origin });
    return c.json({ tunnels: exposed.map((port) => tunnelOf(c.var.sandboxId, port, origin)) });
  })
  .get("/tunnel/:port", async (c) => {
    const port = portNumber(c.req.param("port"));
    if (typeof port !== "number") throw new SandboxError(`invalid port ${JSON.stringify(c.req.param("port"))}`, "INVALID_PORT", { context: { port: c.req.param("port") } });
    const origin = new URL(c.req.url).origin;
    const exposed = (await c.var.sandbox.getExposedPorts({ origin })).find((entry) => entry.port === port);
    if (!exposed) throw new SandboxError(`port ${c.req.param("port")} is not exposed in sandbox ${c.var.sandboxId}: POST /v1/sandbox/${c.var.sandboxId}/tunnel/${c.req.param("port")} exposes it`, "PORT_NOT_EXPOSED", { context: { port: c.req.param("port") } });
    return c.json(tunnelOf(c.var.sandboxId, exposed, origin));
  })
  .post("/tunnel/:port", jsonBody(tunnelRequestSchema), async (c) => {
    const { name } = c.req.valid("json");
    return c.json(await openTunnel(c.var.sandbox, c.var.sandboxId, portNumber(c.req.param("port")), new URL(c.req.url).origin, name));
  })
  .delete("/tunnel/:port", async (c) => {
    await c.var.sandbox.unexposePort(portNumber(c.req.param("port")));
    return c.body(null, 204);
  });
