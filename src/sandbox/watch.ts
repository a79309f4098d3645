/**
 * The Durable Object's file watching: a watch is the container's SSE stream passed through (the
 * caller guards it like every event stream), a change check is one JSON call.
 */
import { changesRequestSchema, WATCH_ROUTES, watchRequestSchema, type ChangesResponse } from "../../protocol/watch.ts";
import type { ChangesOptions, ChangesResult, WatchOptions } from "../rpc/watch.ts";
import type { ContainerApi } from "./container-api.ts";
import { parseRequest } from "./request.ts";

export function watch(api: ContainerApi, path: string, options: WatchOptions = {}): Promise<ReadableStream<Uint8Array>> {
  return api.stream("POST", WATCH_ROUTES.watch, parseRequest(watchRequestSchema, { ...options, path }, "watch request"));
}

export async function checkChanges(api: ContainerApi, path: string, options: ChangesOptions = {}): Promise<ChangesResult> {
  return api.record<ChangesResponse>("POST", WATCH_ROUTES.changes, parseRequest(changesRequestSchema, { ...options, path }, "changes request"));
}
