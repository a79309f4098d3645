/**
 * Terminals: create, list, get, output after a cursor, write, resize, interrupt, kill, wait,
 * delete, and the viewer's WebSocket (`GET /terminals/:tid/ws?since=<cursor>`), whose upgrade is
 * passed through the Durable Object to the container.
 */
import { Hono } from "hono";
import { createTerminalRequestSchema, resizeTerminalRequestSchema, writeTerminalRequestSchema } from "../../../protocol/terminals.ts";
import { base64ToBytes } from "../../rpc/bytes.ts";
import { InvalidRequestError } from "../../rpc/errors.ts";
import { grantedTerminalMode } from "../stream-grant.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const terminalRoutes = new Hono<ApiEnv>()
  .post("/terminals", jsonBody(createTerminalRequestSchema), async (c) => c.json({ terminal: await c.var.sandbox.createTerminal(c.req.valid("json")) }, 201))
  .get("/terminals", async (c) => c.json({ terminals: await c.var.sandbox.listTerminals() }))
  .get("/terminals/:tid", async (c) => c.json({ terminal: await c.var.sandbox.getTerminal(c.req.param("tid")) }))
  .delete("/terminals/:tid", async (c) => c.json(await c.var.sandbox.deleteTerminal(c.req.param("tid"))))
  .get("/terminals/:tid/output", async (c) => {
    const since = c.req.query("since");
    return c.json(await c.var.sandbox.terminalOutput(c.req.param("tid"), since === undefined ? {} : { since: Number(since) }));
  })
  .post("/terminals/:tid/write", jsonBody(writeTerminalRequestSchema), async (c) => {
    const { data, encoding } = c.req.valid("json");
    const input = encoding === "base64" ? base64ToBytes(data) : data;
    return c.json(await c.var.sandbox.writeTerminal(c.req.param("tid"), input));
  })
  .post("/terminals/:tid/resize", jsonBody(resizeTerminalRequestSchema), async (c) => {
    const { cols, rows } = c.req.valid("json");
    return c.json({ terminal: await c.var.sandbox.resizeTerminal(c.req.param("tid"), cols, rows) });
  })
  .post("/terminals/:tid/interrupt", async (c) => {
    await c.var.sandbox.interruptTerminal(c.req.param("tid"));
    return c.json({ terminalId: c.req.param("tid") });
  })
  .post("/terminals/:tid/kill", async (c) => c.json(await c.var.sandbox.killTerminal(c.req.param("tid"), c.req.query("signal"))))
  .get("/terminals/:tid/wait", async (c) => c.json({ terminal: await c.var.sandbox.waitForTerminal(c.req.param("tid")) }))
  .get("/terminals/:tid/ws", async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") throw new InvalidRequestError("this route is a WebSocket: send Upgrade: websocket", "INVALID_REQUEST");
    // View-only stays so whatever the query says once a signed URL granted it.
    const url = new URL(c.req.url);
    url.searchParams.set("mode", grantedTerminalMode(c));
    return c.var.sandbox.connectTerminal(c.req.param("tid"), new Request(url, c.req.raw));
  });
