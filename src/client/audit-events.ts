/**
 * A sandbox's audit trail followed live, over Workers RPC and HTTP alike: the stream of
 * `streamNetworkAudit` read as events, reopened after the last entry's seq when the connection
 * breaks (src/rpc/resumable-stream.ts), so a reader sees each entry once, in order, or is told with
 * a `dropped` event how many the bounded log lost meanwhile. It never ends by itself: stop it with
 * the signal, or by leaving the loop.
 */
import { ResumeCursor } from "../../protocol/resume.ts";
import type { AuditEvent } from "../rpc/network.ts";
import type { RetryPolicy } from "../rpc/resumable-stream.ts";
import { resumableEvents } from "../rpc/resumable-stream.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

export interface AuditStreamOptions {
  /** Start after this entry (default: from the oldest entry kept). */
  since?: number;
  signal?: AbortSignal;
}

export async function* auditEvents(rpc: SandboxRpc, options: AuditStreamOptions, retry: RetryPolicy | undefined): AsyncGenerator<AuditEvent> {
  const { since, signal } = options;
  signal?.throwIfAborted();
  const first = await rpc.streamNetworkAudit(since === undefined ? {} : { since });
  yield* resumableEvents<AuditEvent>(first, {
    describe: "network audit stream",
    signal,
    retry,
    cursor: new ResumeCursor(since === undefined ? {} : { since }),
    isFinal: () => false,
    reopen: (point) => rpc.streamNetworkAudit(point.since === undefined ? {} : { since: point.since }),
  });
}
