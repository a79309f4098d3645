/**
 * The terminal routes the bindings cannot derive (src/rpc/bindings/terminals.ts): input, which the
 * body carries as utf8 or base64 and the method takes as text or bytes, and the viewer's WebSocket
 * (`?since=<cursor>`), whose upgrade is passed through the Durable Object to the container.
 */
import { Hono } from "hono";
import { isWebSocketUpgrade, WEBSOCKET_UPGRADE_MESSAGE, writeTerminalRequestSchema } from "../../../protocol/terminals.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { base64ToBytes } from "../../rpc/bytes.ts";
import { errorFromCode } from "../../rpc/errors.ts";
import { grantedTerminalMode } from "../stream-grant.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const terminalRoutes = new Hono<ApiEnv>()
  .post(API_METHODS.writeTerminal.path, jsonBody(writeTerminalRequestSchema), async (c) => {
    const { data, encoding } = c.req.valid("json");
    const input = encoding === "base64" ? base64ToBytes(data) : data;
    return c.json(await c.var.sandbox.writeTerminal(c.req.param("tid"), input));
  })
  .get(API_METHODS.connectTerminal.path, async (c) => {
    if (!isWebSocketUpgrade(c.req.raw)) throw errorFromCode("WEBSOCKET_UPGRADE_REQUIRED", WEBSOCKET_UPGRADE_MESSAGE);
    // View-only stays so whatever the query says once a signed URL granted it.
    const url = new URL(c.req.url);
    url.searchParams.set("mode", grantedTerminalMode(c));
    return c.var.sandbox.connectTerminal(c.req.param("tid"), new Request(url, c.req.raw));
  });
