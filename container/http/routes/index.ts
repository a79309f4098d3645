/** Every route group the server mounts. A new group is one import and one entry here. */
import type { RouteGroup } from "../types.ts";
import { archiveRoutes } from "./archive.ts";
import { cloudflareRoutes } from "./cloudflare/index.ts";
import { codeRoutes } from "./code.ts";
import { envRoutes } from "./env.ts";
import { execRoutes } from "./exec.ts";
import { fileRoutes } from "./files.ts";
import { gitRoutes } from "./git.ts";
import { watchRoutes } from "./watch.ts";
import { pingRoutes } from "./ping.ts";
import { processRoutes } from "./process.ts";
import { sessionRoutes } from "./sessions.ts";
import { terminalRoutes } from "./terminals.ts";

export const ROUTE_GROUPS: readonly RouteGroup[] = [pingRoutes, envRoutes, execRoutes, processRoutes, sessionRoutes, fileRoutes, watchRoutes, gitRoutes, codeRoutes, terminalRoutes, archiveRoutes, cloudflareRoutes];
