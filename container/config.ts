/**
 * Server configuration: where it listens, the workspace, and the limits it enforces. Every limit
 * defaults to the shared protocol value; tests and the local runtime may tighten them.
 */
import { ARCHIVE_LIMITS } from "../protocol/archive.ts";
import { CODE_LIMITS } from "../protocol/code.ts";
import { LIMITS } from "../protocol/limits.ts";

export interface ServerLimits {
  maxRequestBodyBytes: number;
  maxStdinBytes: number;
  maxLiveProcesses: number;
  defaultLogRetentionBytes: number;
  defaultExecOutputBytes: number;
  killGraceMs: number;
  finishedRetentionMs: number;
  /** Finished records kept at most (oldest auto-cleaned ones go first); autoCleanup:false ones are exempt. */
  maxFinishedRecords: number;
  /** Finished exec records stay reachable by id (not listed) this long, so a broken exec stream can resume. */
  finishedExecRetentionMs: number;
  /** Finished exec records kept at most, and the total bytes their logs may retain; the oldest go first. */
  maxFinishedExecs: number;
  maxFinishedExecBytes: number;
  /** How long an idempotency key is remembered, and how many at once (protocol/idempotency.ts). */
  idempotencyWindowMs: number;
  maxIdempotencyKeys: number;
  /** A streamed exec whose reader went away waits this long for one to come back before its log falls back to the ring. */
  execReattachGraceMs: number;
  chunkMaxBytes: number;
  chunkMaxDelayMs: number;
  keepaliveMs: number;
  /** Live terminals at most. */
  maxTerminals: number;
  /** Watches open at once at most. */
  maxWatches: number;
  /** Code contexts (interpreter processes) at most. */
  maxCodeContexts: number;
  /** After an interrupt, how long a cell gets to stop before its interpreter is killed and restarted. */
  codeInterruptGraceMs: number;
  /** How long an interpreter may take to start. */
  codeStartTimeoutMs: number;
  /** The keepalive of a streamed run that is interrupted when its reader goes (see CODE_LIMITS). */
  codeDisconnectProbeMs: number;
  /** What one archive extraction may write (declared sizes) and how many entries. */
  maxExtractedBytes: number;
  maxExtractedEntries: number;
  /** How long one extraction may take in all, and over one received chunk. */
  extractDeadlineMs: number;
  extractStallMs: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxRequestBodyBytes: LIMITS.maxRequestBodyBytes,
  maxStdinBytes: LIMITS.maxStdinBytes,
  maxLiveProcesses: LIMITS.maxLiveProcesses,
  defaultLogRetentionBytes: LIMITS.defaultLogRetentionBytes,
  defaultExecOutputBytes: LIMITS.maxExecOutputBytes,
  killGraceMs: LIMITS.killGraceMs,
  finishedRetentionMs: LIMITS.finishedRetentionMs,
  maxFinishedRecords: 1024,
  finishedExecRetentionMs: LIMITS.finishedExecRetentionMs,
  maxFinishedExecs: LIMITS.maxFinishedExecs,
  maxFinishedExecBytes: LIMITS.maxFinishedExecBytes,
  idempotencyWindowMs: LIMITS.idempotencyWindowMs,
  maxIdempotencyKeys: LIMITS.maxIdempotencyKeys,
  execReattachGraceMs: LIMITS.execReattachGraceMs,
  chunkMaxBytes: LIMITS.chunkMaxBytes,
  chunkMaxDelayMs: LIMITS.chunkMaxDelayMs,
  keepaliveMs: LIMITS.keepaliveMs,
  maxTerminals: LIMITS.maxTerminals,
  maxWatches: LIMITS.maxWatches,
  maxCodeContexts: CODE_LIMITS.maxContexts,
  codeInterruptGraceMs: CODE_LIMITS.interruptGraceMs,
  codeStartTimeoutMs: CODE_LIMITS.startTimeoutMs,
  codeDisconnectProbeMs: CODE_LIMITS.disconnectProbeMs,
  maxExtractedBytes: ARCHIVE_LIMITS.maxExtractedBytes,
  maxExtractedEntries: ARCHIVE_LIMITS.maxExtractedEntries,
  extractDeadlineMs: ARCHIVE_LIMITS.extractDeadlineMs,
  extractStallMs: ARCHIVE_LIMITS.extractStallMs,
};

export function resolveLimits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(overrides) as [keyof ServerLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`limit ${key} must be a non-negative number`);
    limits[key] = value;
  }
  return limits;
}
