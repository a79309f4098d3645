/**
 * Minting signed stream URLs (../stream-url.ts) for a browser: a process's log stream (for
 * `EventSource`), bound to the process's run, and a terminal's viewer socket (for `WebSocket`),
 * interactive or view-only. The stream must exist when the
 * URL is minted, so a wrong id fails here with its own code instead of as a browser's bare error.
 * Exec streams get theirs from POST /exec with `stream: "url"` (./exec.ts).
 */
import { Hono } from "hono";
import { processRunTag, streamUrlRequestSchema, terminalUrlRequestSchema } from "../../../protocol/stream-url.ts";
import { errorResponse } from "../errors.ts";
import { mintStreamUrl, streamTargets } from "../stream-url.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const streamUrlRoutes = new Hono<ApiEnv>()
  .post("/processes/:pid/logs/stream-url", jsonBody(streamUrlRequestSchema), async (c) => {
    const id = c.req.param("pid");
    const process = await c.var.sandbox.getProcess(id, {});
    if (!process) return errorResponse(c, "PROCESS_NOT_FOUND", `Process "${id}" not found`, { processId: id });
    // The URL names this run: a later process that takes the same id is not what it grants.
    return c.json(await mintStreamUrl(c, streamTargets.processLogs(c.var.sandboxId, id, processRunTag(process)), c.req.valid("json").ttlSeconds));
  })
  .post("/terminals/:tid/ws-url", jsonBody(terminalUrlRequestSchema), async (c) => {
    const { ttlSeconds, mode } = c.req.valid("json");
    const terminal = await c.var.sandbox.getTerminal(c.req.param("tid"));
    return c.json(await mintStreamUrl(c, streamTargets.terminalSocket(c.var.sandboxId, terminal.id, mode === "view" ? "view" : undefined), ttlSeconds));
  });
