/**
 * Whether a sandbox sleeps now, and when it will (protocol/keep-alive.ts). Decided from what the
 * Durable Object knows (its open streams, its last call, when the container started) and what the
 * container reports (its work, and for how long there has been none), by one pure function, so
 * the alarm that puts the sandbox to sleep and getInfo() say the same thing.
 *
 * A sandbox sleeps at the first of:
 *  - idle: sleepAfter after the last call, stream or piece of work, once nothing is left of them;
 *  - maxIdle: that long after the last call or stream, whatever work still runs (a forgotten
 *    `sleep infinity` must not keep a container forever);
 *  - maxLifetime: that long after its container started, busy or not.
 *
 * `keepAlive` (Cloudflare's option of that name) is the caller saying the sandbox is in use even when
 * nothing shows it: no idle sleep, and no default maxIdle (which exists to catch work forgotten by
 * a caller who never said so). The ceilings a caller set (maxIdle, maxLifetime) still hold, and so
 * does the local runtime's room-making at its sandbox cap (the operator's).
 */
import { durationSeconds, KEEP_ALIVE_DEFAULTS, type ContainerWork, type KeepAliveReason, type KeepAliveStatus } from "../../protocol/keep-alive.ts";

export interface KeepAliveSettings {
  sleepAfter: string | number;
  /** undefined: no ceiling on idle time with work running (keepAlive without a maxIdle set). */
  maxIdle: string | number | undefined;
  /** undefined: a container's life is not bounded. */
  maxLifetime: string | number | undefined;
  /** Stays awake with nothing running: it sleeps only at a ceiling, when destroyed, or once this is turned off. */
  keepAlive: boolean;
}

export const DEFAULT_KEEP_ALIVE: Omit<KeepAliveSettings, "sleepAfter"> = { maxIdle: KEEP_ALIVE_DEFAULTS.maxIdle, maxLifetime: undefined, keepAlive: false };

/** The settings a sandbox config gives (the default maxIdle only without keepAlive). */
export function keepAliveSettingsOf(config: { maxIdle?: string | number | undefined; maxLifetime?: string | number | null | undefined; keepAlive?: boolean | undefined }): Omit<KeepAliveSettings, "sleepAfter"> {
  const keepAlive = config.keepAlive ?? false;
  return { maxIdle: config.maxIdle ?? (keepAlive ? undefined : DEFAULT_KEEP_ALIVE.maxIdle), maxLifetime: config.maxLifetime ?? undefined, keepAlive };
}

export interface KeepAliveFacts {
  now: number;
  openStreams: number;
  lastActivityAt: number;
  /** When the running container started (undefined: not known). */
  containerStartedAt: number | undefined;
  /** What the container reported (undefined: it did not answer, so no work is known). */
  work: ContainerWork | undefined;
  workIdleMs: number;
}

export interface KeepAliveVerdict {
  sleep: boolean;
  reasons: { kind: KeepAliveReason; count: number }[];
  sleepsAt: number | null;
  why: KeepAliveStatus["why"];
  /** When to look again if it stays awake: at sleepsAt, and at least every sleepAfter while work runs. */
  checkAt: number;
}

const ms = (duration: string | number) => durationSeconds(duration) * 1000;

export function decide(settings: KeepAliveSettings, facts: KeepAliveFacts): KeepAliveVerdict {
  const { now, openStreams, lastActivityAt, containerStartedAt, work, workIdleMs } = facts;
  const reasons: KeepAliveVerdict["reasons"] = [];
  if (openStreams > 0) reasons.push({ kind: "streams", count: openStreams });
  for (const kind of ["processes", "codeCells", "terminals", "requests"] as const) if (work && work[kind] > 0) reasons.push({ kind, count: work[kind] });
  const busy = reasons.length > 0;
  const sleepAfterMs = ms(settings.sleepAfter);

  const candidates: { at: number; why: NonNullable<KeepAliveStatus["why"]> }[] = [];
  if (!busy && !settings.keepAlive) candidates.push({ at: Math.max(lastActivityAt, now - workIdleMs) + sleepAfterMs, why: "idle" });
  if (openStreams === 0 && settings.maxIdle !== undefined) candidates.push({ at: lastActivityAt + ms(settings.maxIdle), why: "maxIdle" });
  if (settings.maxLifetime !== undefined && containerStartedAt !== undefined) candidates.push({ at: containerStartedAt + ms(settings.maxLifetime), why: "maxLifetime" });
  const first = candidates.sort((a, b) => a.at - b.at)[0];

  const sleepsAt = first?.at ?? null;
  return {
    sleep: sleepsAt !== null && sleepsAt <= now,
    reasons,
    sleepsAt,
    why: first?.why ?? null,
    checkAt: Math.min(sleepsAt ?? Number.POSITIVE_INFINITY, now + sleepAfterMs),
  };
}

/** getInfo()'s account of a verdict. */
export function keepAliveStatus(settings: KeepAliveSettings, facts: KeepAliveFacts, verdict: KeepAliveVerdict): KeepAliveStatus {
  return {
    reasons: verdict.reasons,
    lastActivityAt: new Date(facts.lastActivityAt).toISOString(),
    sleepsAt: verdict.sleepsAt === null ? null : new Date(verdict.sleepsAt).toISOString(),
    why: verdict.why,
    sleepAfter: String(settings.sleepAfter),
    maxIdle: settings.maxIdle === undefined ? null : String(settings.maxIdle),
    maxLifetime: settings.maxLifetime === undefined ? null : String(settings.maxLifetime),
    keepAlive: settings.keepAlive,
  };
}
