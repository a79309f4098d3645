/**
 * The preview port routes the bindings cannot derive (src/rpc/bindings/ports.ts): exposing and
 * listing make each port's URL (an origin of its own, ../../rpc/preview-urls.ts) from this request's
 * origin, which on loopback gives `<port>-<id>.localhost`; unexposing reads the port from the path.
 * The proxied requests themselves are served by ../port-proxy.ts, by their Host, never on the API's origin.
 */
import { Hono } from "hono";
import { z } from "zod";
import { exposePortRequestSchema } from "../../../protocol/preview-ports.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

/** The port is checked by the Durable Object (INVALID_PORT), the rest of the request here and there; unknown fields are refused. */
const exposeBodySchema = exposePortRequestSchema.extend({ port: z.unknown() });

export const portRoutes = new Hono<ApiEnv>()
  .post(API_METHODS.exposePort.path, jsonBody(exposeBodySchema), async (c) => {
    const { port, ...options } = c.req.valid("json");
    const origin = new URL(c.req.url).origin;
    return c.json(await c.var.sandbox.exposePort(port as number, { ...(options as object), origin }), 201);
  })
  .get(API_METHODS.getExposedPorts.path, async (c) => c.json({ ports: await c.var.sandbox.getExposedPorts({ origin: new URL(c.req.url).origin }) }))
  .delete(API_METHODS.unexposePort.path, async (c) => c.json(await c.var.sandbox.unexposePort(portNumber(c.req.param("port")))));

/** A path segment as a port number (anything else stays as it is, for the Durable Object to refuse as INVALID_PORT). */
function portNumber(segment: string): number {
  return /^\d{1,6}$/.test(segment) ? Number(segment) : (segment as unknown as number);
}
