/**
 * Tunnels through the Bridge API are our preview ports: `POST /v1/sandbox/:id/tunnel/:port {name?}`
 * exposes the port (or answers the one already exposed) as the Bridge's `Tunnel`
 * `{id, port, url, hostname, createdAt, name?}`; `DELETE` unexposes it (204, also when it was not).
 * The URL is private like every preview URL: it carries the port's token, so it opens in a browser
 * and answers a program's requests as it is, while the bare address refuses strangers.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { ExposedPort } from "../../rpc/ports.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

const tunnelRequestSchema = z.object({ name: z.string().min(1).max(63).optional() });

/** A path segment as a port number (anything else stays as it is, for the Durable Object to refuse as INVALID_PORT). */
function portNumber(segment: string): number {
  return /^\d{1,6}$/.test(segment) ? Number(segment) : (segment as unknown as number);
}

function tunnelOf(sandboxId: string, exposed: ExposedPort, origin: string) {
  const url = new URL(exposed.url, origin);
  return {
    id: `${sandboxId}-${exposed.port}`,
    port: exposed.port,
    url: url.href,
    hostname: url.host,
    createdAt: exposed.exposedAt,
    ...(exposed.name === undefined ? {} : { name: exposed.name }),
  };
}

export const bridgeTunnelRoutes = new Hono<ApiEnv>()
  .post("/tunnel/:port", jsonBody(tunnelRequestSchema), async (c) => {
    const port = portNumber(c.req.param("port"));
    const { name } = c.req.valid("json");
    const origin = new URL(c.req.url).origin;
    const find = async () => (await c.var.sandbox.getExposedPorts({ origin })).find((exposed) => exposed.port === port);
    let exposed = await find();
    if (!exposed) {
      try {
        exposed = await c.var.sandbox.exposePort(port, { origin, ...(name === undefined ? {} : { name }) });
      } catch (error) {
        // Another request exposed it meanwhile: answer that one, as the Bridge reuses a tunnel.
        if (!(error instanceof SandboxError && error.code === "PORT_ALREADY_EXPOSED")) throw error;
        exposed = await find();
        if (!exposed) throw error;
      }
    }
    return c.json(tunnelOf(c.var.sandboxId, exposed, origin));
  })
  .delete("/tunnel/:port", async (c) => {
    try {
      await c.var.sandbox.unexposePort(portNumber(c.req.param("port")));
    } catch (error) {
      if (!(error instanceof SandboxError && error.code === "PORT_NOT_EXPOSED")) throw error;
    }
    return c.body(null, 204);
  });
