/**
 * What a signed stream URL's claims (./stream-url.ts) mean for the route it opens: a URL minted for
 * one run of a process reads that run only (a later process that took the same id is refused with
 * STREAM_URL_STALE), and a terminal socket minted view-only stays view-only.
 */
import type { Context } from "hono";
import { processRunTag } from "../../protocol/stream-url.ts";
import type { TerminalSocketMode } from "../../protocol/terminals.ts";
import { SandboxError } from "../rpc/errors.ts";
import type { ApiEnv } from "./types.ts";

/** Throws STREAM_URL_STALE when the request came by a URL minted for another run of this process id. */
export async function checkGrantedRun(c: Context<ApiEnv>, processId: string): Promise<void> {
  const run = c.var.streamGrant?.run;
  if (run === undefined) return;
  const process = await c.var.sandbox.getProcess(processId, {});
  if (process && processRunTag(process) === run) return;
  throw new SandboxError(`This stream URL was minted for an earlier process "${processId}", which is gone: mint a new one`, "STREAM_URL_STALE", {
    context: { processId },
  });
}

/** The mode a terminal socket is opened in: view-only when its URL says so, or its caller asks. */
export function grantedTerminalMode(c: Context<ApiEnv>): TerminalSocketMode {
  return c.var.streamGrant?.mode === "view" || c.req.query("mode") === "view" ? "view" : "interactive";
}
