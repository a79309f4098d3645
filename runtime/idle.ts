/**
 * Which running sandboxes may sleep to make room: those with no work — no process that keeps them
 * awake (those started with `keepAlive: false` do not), no running code cell, no terminal and no
 * request being answered (no stream open) — for a while, as their own servers report (`GET /api/info`
 * `activity.work`, what the Durable Object asks before a sleep too), quietest first. Asking is not
 * activity (protocol/info.ts OBSERVING_ROUTES): many asking at once never make a sandbox look busy.
 * One just started is not idle yet: its first call is on its way. A server that does not answer at
 * once is counted apart: busy as far as anyone knows, but worth asking again.
 */
import { INFO_ROUTES, type InfoResponse } from "../protocol/info.ts";
import type { ContainerProcess } from "./container-process.ts";

const ASK_TIMEOUT_MS = 2_000;
/** Quiet at least this long before a sandbox counts as idle. */
export const MIN_QUIET_MS = 5_000;

export interface IdleSurvey {
  /** The idle ones, the one quiet longest first. */
  idle: ContainerProcess[];
  /** How many did not answer in time (on a busy machine, idle ones among them). */
  unanswered: number;
}

/** Asks each of `candidates` how long it has been idle. */
export async function idleRanking(candidates: readonly ContainerProcess[], minQuietMs = MIN_QUIET_MS): Promise<IdleSurvey> {
  const answers = await Promise.all(candidates.map(async (container) => ({ container, quietMs: await idleFor(container) })));
  return {
    idle: answers
      .filter((answer): answer is { container: ContainerProcess; quietMs: number } => answer.quietMs !== undefined && answer.quietMs >= minQuietMs)
      .sort((a, b) => b.quietMs - a.quietMs)
      .map((answer) => answer.container),
    unanswered: answers.filter((answer) => answer.quietMs === undefined).length,
  };
}

/** How long the sandbox has been idle (ms): 0 when it is busy or does not say, undefined when it did not answer in time. */
async function idleFor(container: ContainerProcess): Promise<number | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${container.port}${INFO_ROUTES.info}`, {
      headers: { authorization: `Bearer ${container.secret}` },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (!response.ok) return 0;
    const info = (await response.json()) as Partial<InfoResponse>;
    const work = info.activity?.work;
    if (!work) return 0;
    const idle = work.processes === 0 && work.codeCells === 0 && work.terminals === 0 && work.requests === 0;
    return idle ? (info.activity?.quietMs ?? 0) : 0;
  } catch {
    return undefined;
  }
}
