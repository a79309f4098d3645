/**
 * Cloudflare's container API, served beside ours so that Cloudflare's Sandbox SDK (`@cloudflare/sandbox`,
 * its route-based client) can drive this server unchanged. Where their paths are ours
 * (`/api/execute`, `/api/process/…`) our routes answer them; these are the paths only they use. Each
 * route maps onto the operation our own route calls; only the shapes are converted here.
 */
import type { RouteGroup } from "../../types.ts";
import { cloudflareBackupRoutes } from "./backup.ts";
import { cloudflareCodeInterpreterRoutes } from "./code-interpreter.ts";
import { cloudflareCommandRoutes } from "./commands.ts";
import { cloudflareFileRoutes } from "./files.ts";
import { cloudflareGitRoutes } from "./git.ts";
import { cloudflarePortRoutes } from "./port-watch.ts";
import { cloudflareReadStreamRoutes } from "./read-stream.ts";
import { cloudflareSessionRoutes } from "./sessions.ts";
import { cloudflareVersionRoutes } from "./version.ts";
import { cloudflareWatchRoutes } from "./watch.ts";

export const cloudflareRoutes: RouteGroup = {
  name: "cloudflare",
  routes: [
    ...cloudflareSessionRoutes,
    ...cloudflareFileRoutes,
    ...cloudflareReadStreamRoutes,
    ...cloudflarePortRoutes,
    ...cloudflareVersionRoutes,
    ...cloudflareCodeInterpreterRoutes,
    ...cloudflareGitRoutes,
    ...cloudflareWatchRoutes,
    ...cloudflareCommandRoutes,
    ...cloudflareBackupRoutes,
  ],
};
