/** Defaults and hard limits shared by both sides. Sizes in bytes, times in milliseconds. */
export const LIMITS = {
  /** Largest JSON request body the container server or the Worker accepts. */
  maxRequestBodyBytes: 16 * 1024 * 1024,
  /**
   * Deepest nesting of arrays and objects a JSON request body may have. Real requests nest a few
   * levels; a body of the largest size nested all the way down takes seconds of event loop and
   * hundreds of MB to parse, so deeper ones are refused before parsing (protocol/json-depth.ts).
   */
  maxJsonDepth: 64,
  /** Largest stdin accepted by exec or one stdin write (decoded bytes). */
  maxStdinBytes: 8 * 1024 * 1024,
  /** Live (starting or running) processes per container. */
  maxLiveProcesses: 256,
  /**
   * Live terminals per container, and watches open at once: each holds descriptors of the server
   * (a PTY; inotify watches and a descriptor per watched folder), so one sandbox cannot exhaust the
   * server's and make every call fail. Past them: TOO_MANY_TERMINALS, TOO_MANY_WATCHES.
   */
  maxTerminals: 32,
  maxWatches: 16,
  /** Output retained per process log unless the caller sets `logRetentionBytes`. */
  defaultLogRetentionBytes: 8 * 1024 * 1024,
  /** Largest `logRetentionBytes` a caller may ask for. */
  maxLogRetentionBytes: 256 * 1024 * 1024,
  /**
   * Per-stream cap on a buffered exec result; a caller's `maxOutputBytes` may lower it, never raise it.
   * The result crosses Workers RPC, which refuses a value over 32 MiB serialized, and a string
   * serializes at up to 2 bytes per character (UTF-16 as soon as one character lies outside Latin-1):
   * both streams at this cap plus the longest command stay under it (2 × 2 × 7 MiB + 2 × 256 KiB).
   * What lies past it is dropped with `stdoutTruncated`/`stderrTruncated`; larger outputs are for the
   * event stream (execStream) or a background process's log.
   */
  maxExecOutputBytes: 7 * 1024 * 1024,
  /** Largest timeout a caller may set: one day. */
  maxTimeoutMs: 24 * 60 * 60 * 1000,
  /** SIGTERM (or the asked-for signal) → SIGKILL grace period. */
  killGraceMs: 2000,
  /** How long finished process records are kept when `autoCleanup` is on. */
  finishedRetentionMs: 10 * 60 * 1000,
  /**
   * How long a finished exec's record (status and log) stays reachable by id, so a client whose exec
   * stream broke can resume it (`GET /api/execute/{id}/stream`, `Last-Event-ID`) after it ended.
   */
  finishedExecRetentionMs: 60 * 1000,
  /** Finished exec records kept at most, and their retained logs' total size: the oldest go first. */
  maxFinishedExecs: 256,
  maxFinishedExecBytes: 64 * 1024 * 1024,
  /**
   * How long a streamed exec whose reader went away waits for one to come back (a client resuming a
   * broken stream): meanwhile its log keeps what it holds and the command keeps the backpressure it
   * had, blocking on its pipe once the log is full, as with a pipe nobody reads. After it, the log
   * falls back to its ring: output flows on, the oldest is dropped, a late reader is told.
   */
  execReattachGraceMs: 60 * 1000,
  /** Output is coalesced into chunks of up to this many bytes… */
  chunkMaxBytes: 64 * 1024,
  /** …or flushed after this long, whichever comes first. */
  chunkMaxDelayMs: 4,
  /**
   * SSE comment sent on streams silent this long, so proxies that cut idle connections keep them
   * open (the first goes out with the headers). Short enough for proxies with idle cuts of a few
   * seconds; at a dozen bytes a beat it costs nothing worth counting.
   */
  keepaliveMs: 5_000,
  /**
   * A request body a server stopped reading (refused midway, or answered before it was read) is read
   * on and thrown away up to this many bytes, for at most refusedBodyDrainMs, so its connection can
   * carry the next request; past either, the connection is closed instead. Never left half-read: a
   * kept-alive connection with a body still in it wedges the next call that reuses it.
   */
  refusedBodyDrainBytes: 1024 * 1024,
  refusedBodyDrainMs: 2_000,
  /**
   * How long the Durable Object reads on an upload the container answered before it was all sent (a
   * refused archive), so the caller's request ends whole (src/sandbox/upload-relay.ts); at most the
   * streamed-file cap of bytes.
   */
  refusedUploadDrainMs: 60_000,
  /**
   * How long an idempotency key is remembered after its run started: a retry within it attaches to
   * the first run, never starts a second. Attaching needs the run's record; a record let go before
   * the window ends (finished execs are kept finishedExecRetentionMs) answers IDEMPOTENT_RUN_GONE
   * with how the run ended, and still runs nothing.
   */
  idempotencyWindowMs: 10 * 60 * 1000,
  /** Keys remembered at once per container (the oldest is forgotten first): a bound on memory. */
  maxIdempotencyKeys: 4096,
  maxProcessIdLength: 128,
  maxCommandLength: 256 * 1024,
} as const;
