/** What route handlers are given and what a route group declares. */
import type { WorkClock } from "../services/work-clock.ts";
import type { OpenRequests } from "./open-requests.ts";
import type { Route as KitRoute } from "../../server-kit/http/router.ts";
import type { RoutedRequest } from "../../server-kit/http/serve.ts";
import type { ServerLimits } from "../config.ts";
import type { CommandEnvironment } from "../engine/environment.ts";
import type { ProcessTable } from "../engine/process-table.ts";
import type { CodeContexts } from "../interpreter/code-contexts.ts";
import type { TerminalTable } from "../terminals/terminal-table.ts";
import type { ServerServices } from "../services/server-services.ts";
import type { WatchSlots } from "../watch/watch-slots.ts";

/** Server-wide state shared by every route (one per started server). */
export interface ServerContext {
  readonly processes: ProcessTable;
  /** Programs on pseudo-terminals. */
  readonly terminals: TerminalTable;
  /** The environment commands start from (base and sandbox-level variables). */
  readonly environment: CommandEnvironment;
  /** Isolation, file paths, sessions and file limits (container/services/). */
  readonly services: ServerServices;
  /** The code interpreter's contexts and runs. */
  readonly code: CodeContexts;
  /** Watches open now, bounded by limits.maxWatches. */
  readonly watches: WatchSlots;
  readonly workspace: string;
  readonly limits: ServerLimits;
  /** Random id minted at boot: a new value means a restarted server. */
  readonly instanceId: string;
  readonly startedAt: number;
  readonly version: string;
  /** Aborted when the server closes; long-lived handlers (streams) stop on it. */
  readonly shutdown: AbortSignal;
  /** Requests being answered now (streams among them). */
  readonly openRequests: OpenRequests;
  /** The work that keeps the sandbox awake, and since when there has been none. */
  readonly work: WorkClock;
}

export interface RequestContext extends RoutedRequest {
  readonly server: ServerContext;
}

export type Route = KitRoute<RequestContext>;

/** One file's worth of routes. */
export interface RouteGroup {
  name: string;
  routes: Route[];
}
