/** Every route group the server mounts. A new group is one import and one entry here. */
import type { RouteGroup } from "../types.ts";
import { execRoutes } from "./exec.ts";
import { pingRoutes } from "./ping.ts";
import { processRoutes } from "./process.ts";

export const ROUTE_GROUPS: readonly RouteGroup[] = [pingRoutes, execRoutes, processRoutes];
