/**
 * A watch as Server-Sent Events, for our route and for Cloudflare's (which frame the same events in
 * their shapes). The watch is in place before the headers go out, so `watching` means "changes from
 * now on are seen". Changes are written as they come while the socket keeps up; while it does not,
 * they wait in a bounded queue (container/watch/change-queue.ts) and an `overflow` event counts what
 * had to be dropped. Keepalive comments go out on a silent stream as on every other. The watch (its
 * inotify watches and directory descriptors) is closed when the reader goes away, the server shuts
 * down, or the watch ends by itself.
 */
import { KEEPALIVE_FRAME, SSE_HEADERS } from "../../../protocol/sse.ts";
import { WATCH_LIMITS, type WatchEvent, type WatchRequest } from "../../../protocol/watch.ts";
import { ChangeQueue } from "../../watch/change-queue.ts";
import { openWatchRoot, watchScope } from "../../watch/roots.ts";
import { TreeWatcher } from "../../watch/tree-watcher.ts";
import type { RequestContext } from "../types.ts";

/** One event as a frame on the wire, or undefined to leave it out. */
export type WatchFramer = (event: WatchEvent) => string | undefined;

export async function streamWatch(ctx: RequestContext, request: WatchRequest, frame: WatchFramer): Promise<void> {
  const { res } = ctx;
  const scope = watchScope(request);
  const release = ctx.server.watches.acquire();
  try {
    await watchUntilDone(ctx, request, frame, scope);
  } finally {
    release();
  }
}

async function watchUntilDone(ctx: RequestContext, request: WatchRequest, frame: WatchFramer, scope: ReturnType<typeof watchScope>): Promise<void> {
  const { res } = ctx;
  const { handle, display } = await openWatchRoot(ctx.server.services.paths, request.path);
  const queue = new ChangeQueue(WATCH_LIMITS.maxPendingChanges);
  let last: WatchEvent | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  // Listened for before the (possibly long) walk, so a reader gone meanwhile is not missed.
  res.once("close", finish);
  ctx.server.shutdown.addEventListener("abort", finish, { once: true });

  const send = (event: WatchEvent) => {
    const text = frame(event);
    if (text !== undefined && !res.writableEnded) res.write(text);
  };
  const flush = () => {
    // Changes seen during the walk wait for the headers and `watching`.
    if (!res.headersSent || res.writableNeedDrain || res.writableEnded) return;
    const { changes, dropped } = queue.take();
    for (const change of changes) send({ type: "change", ...change });
    if (dropped > 0) send({ type: "overflow", dropped });
    keepalive?.refresh();
  };

  let watcher: TreeWatcher;
  try {
    watcher = await TreeWatcher.start(handle, {
      ...scope,
      maxDirectories: WATCH_LIMITS.maxWatchedDirectories,
      onChange: (change) => {
        queue.push(change);
        flush();
      },
      onEnd: (end) => {
        last = "error" in end ? { type: "error", code: end.error.code, error: end.error.message } : { type: "stopped", reason: end.reason };
        finish();
      },
    });
  } catch (error) {
    res.off("close", finish);
    ctx.server.shutdown.removeEventListener("abort", finish);
    throw error;
  }
  keepalive = setInterval(() => {
    if (!res.writableNeedDrain) res.write(KEEPALIVE_FRAME);
  }, ctx.server.limits.keepaliveMs);
  res.on("drain", flush);
  try {
    res.writeHead(200, SSE_HEADERS);
    send({ type: "watching", path: display, recursive: scope.recursive });
    flush();
    await finished;
    if (!res.destroyed) {
      flush();
      if (last) send(last);
    }
  } finally {
    watcher.close();
    clearInterval(keepalive);
    res.off("drain", flush);
    res.off("close", finish);
    ctx.server.shutdown.removeEventListener("abort", finish);
    if (!res.writableEnded) res.end();
  }
}
