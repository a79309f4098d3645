/**
 * Which running sandbox may sleep to make room: one with no live process, no terminal and no request
 * being answered (no stream open), as its own server reports (`GET /api/info`); of those, the one
 * started longest ago. A server that does not answer at once is taken as busy.
 */
import { INFO_ROUTES, type InfoResponse } from "../protocol/info.ts";
import type { ContainerProcess } from "./container-process.ts";

const ASK_TIMEOUT_MS = 2_000;

export async function idlest(candidates: readonly ContainerProcess[]): Promise<ContainerProcess | undefined> {
  const answers = await Promise.all(candidates.map(async (container) => ({ container, idle: await isIdle(container) })));
  return answers
    .filter((answer) => answer.idle)
    .map((answer) => answer.container)
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt))[0];
}

async function isIdle(container: ContainerProcess): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${container.port}${INFO_ROUTES.info}`, {
      headers: { authorization: `Bearer ${container.secret}` },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (!response.ok) return false;
    const info = (await response.json()) as Partial<InfoResponse>;
    return info.processes?.live === 0 && info.activity?.openRequests === 0 && info.activity?.terminals === 0;
  } catch {
    return false;
  }
}
