/** What route handlers are given and what a route group declares. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerLimits } from "../config.ts";
import type { ProcessTable } from "../engine/process-table.ts";
import type { SandboxOptions } from "../services/options.ts";

/** Server-wide state shared by every route (one per started server). */
export interface ServerContext {
  readonly processes: ProcessTable;
  readonly workspace: string;
  readonly limits: ServerLimits;
  /** Random id minted at boot: a new value means a restarted server. */
  readonly instanceId: string;
  readonly startedAt: number;
  readonly version: string;
  /** Aborted when the server closes; long-lived handlers (streams) stop on it. */
  readonly shutdown: AbortSignal;
  /** Isolation, file limits and state directory for the sandbox routes (container/services/). */
  readonly sandbox?: SandboxOptions;
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly server: ServerContext;
}

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type RouteHandler = (ctx: RequestContext) => Promise<void> | void;

export interface Route {
  method: HttpMethod;
  /** Literal segments and `:name` parameters, e.g. `/api/process/:id/stream`. */
  path: string;
  handler: RouteHandler;
}

/** One file's worth of routes; `setup` runs once at server start (e.g. to add spawn hooks). */
export interface RouteGroup {
  name: string;
  routes: Route[];
  setup?(server: ServerContext): void | (() => void | Promise<void>);
}
