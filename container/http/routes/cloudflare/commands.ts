/**
 * `GET /api/commands`: Cloudflare's `getCommands`, the commands a shell in the sandbox can run. Asked
 * of bash itself (`compgen -c`), run by our engine like any command, so the answer is what the
 * sandbox sees (its PATH, under its isolation), not what the server's own PATH holds.
 */
import { sendOk } from "../../../../server-kit/http/response.ts";
import { ServiceError } from "../../../../server-kit/service-error.ts";
import { execResultOf } from "../../../engine/exec.ts";
import { execSpec } from "../../../engine/options.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

const LIST_TIMEOUT_MS = 10_000;

async function commands(ctx: RequestContext): Promise<void> {
  const record = await ctx.server.processes.launch(execSpec({ command: "compgen -c", timeoutMs: LIST_TIMEOUT_MS, isolated: true }, ctx.server.limits, "buffered"));
  await record.finished;
  const result = execResultOf(record);
  record.releaseCapture();
  if (!result.success) throw new ServiceError("INTERNAL_ERROR", `listing the commands failed: ${result.stderr.trim()}`, { exitCode: result.exitCode });
  const availableCommands = [...new Set(result.stdout.split("\n").filter((name) => name !== ""))].sort();
  sendOk(ctx.res, { availableCommands, count: availableCommands.length });
}

export const cloudflareCommandRoutes: Route[] = [cloudflareRoute("GET", CLOUDFLARE_ROUTES.commands, commands)];
