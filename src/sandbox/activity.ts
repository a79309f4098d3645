/**
 * What keeps a sandbox awake, as its Durable Object counts it: open streams (a call in flight counts
 * as one), the last call or stream's end, the next look that work asked for, the container's start,
 * and the config's ceilings. keep-alive.ts decides from these facts whether the sandbox sleeps; the
 * object's activity timeout is cut to the deadline they give.
 */
import type { InfoResponse } from "../../protocol/info.ts";
import { sleepAfterSeconds } from "../../protocol/sandbox-config.ts";
import { decide, DEFAULT_KEEP_ALIVE, type KeepAliveFacts, type KeepAliveSettings } from "./keep-alive.ts";
import type { KeepAliveReading } from "./shell.ts";

export class Activity {
  openStreams = 0;
  /** The last call, or the end of the last open stream. */
  lastActivityAt = Date.now();
  /** Set when work kept the sandbox awake at an expiry: when to look again. A call clears it. */
  nextCheckAt: number | undefined;
  /** Counts calls that reached the container: a sleep that sees it change while saving was interrupted by work. */
  calls = 0;
  /** When the running container started, once known (its start here, or its uptime in a report). */
  containerStartedAt: number | undefined;
  /** The ceilings on staying awake for work (keep-alive.ts), from the config. */
  ceilings: Omit<KeepAliveSettings, "sleepAfter"> = { ...DEFAULT_KEEP_ALIVE };

  /** A call reached the container. */
  called(): void {
    this.calls++;
    this.lastActivityAt = Date.now();
    this.nextCheckAt = undefined;
  }

  /** The idle clock starts again when the last stream ends, not when it began. */
  streamClosed(): void {
    this.openStreams--;
    this.lastActivityAt = Date.now();
  }

  /** The latest the sandbox may sleep, whatever sleepAfter says: the end of its lifetime, or the next look work asked for. */
  deadline(): number {
    const lifetime = this.ceilings.maxLifetime;
    const lifetimeEnd = lifetime === undefined || this.containerStartedAt === undefined ? Infinity : this.containerStartedAt + sleepAfterSeconds(lifetime) * 1000;
    return Math.min(lifetimeEnd, this.nextCheckAt ?? Infinity);
  }

  /** The verdict from these facts and the container's report (undefined: it did not answer). `asking`: calls in flight that only ask. */
  reading(sleepAfter: string | number, report: Pick<InfoResponse, "activity" | "uptimeMs"> | undefined, asking: number): KeepAliveReading {
    const now = Date.now();
    if (report) this.containerStartedAt ??= now - report.uptimeMs;
    const settings: KeepAliveSettings = { sleepAfter, ...this.ceilings };
    const facts: KeepAliveFacts = {
      now,
      openStreams: this.openStreams - asking,
      lastActivityAt: this.lastActivityAt,
      containerStartedAt: this.containerStartedAt,
      work: report?.activity.work,
      workIdleMs: report?.activity.workIdleMs ?? Number.POSITIVE_INFINITY,
    };
    return { settings, facts, verdict: decide(settings, facts) };
  }
}
