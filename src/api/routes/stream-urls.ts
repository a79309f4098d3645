/**
 * Minting signed stream URLs (../stream-url.ts) for a browser: a process's log stream (for
 * `EventSource`) and a terminal's viewer socket (for `WebSocket`). The stream must exist when the
 * URL is minted, so a wrong id fails here with its own code instead of as a browser's bare error.
 * Exec streams get theirs from POST /exec with `stream: "url"` (./exec.ts).
 */
import { Hono } from "hono";
import { streamUrlRequestSchema } from "../../../protocol/stream-url.ts";
import { errorResponse } from "../errors.ts";
import { mintStreamUrl, streamTargets } from "../stream-url.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const streamUrlRoutes = new Hono<ApiEnv>()
  .post("/processes/:pid/logs/stream-url", jsonBody(streamUrlRequestSchema), async (c) => {
    const id = c.req.param("pid");
    if (!(await c.var.sandbox.getProcess(id, {}))) return errorResponse(c, "PROCESS_NOT_FOUND", `Process "${id}" not found`, { processId: id });
    return c.json(await mintStreamUrl(c, streamTargets.processLogs(c.var.sandboxId, id), c.req.valid("json").ttlSeconds));
  })
  .post("/terminals/:tid/ws-url", jsonBody(streamUrlRequestSchema), async (c) => {
    const terminal = await c.var.sandbox.getTerminal(c.req.param("tid"));
    return c.json(await mintStreamUrl(c, streamTargets.terminalSocket(c.var.sandboxId, terminal.id), c.req.valid("json").ttlSeconds));
  });
