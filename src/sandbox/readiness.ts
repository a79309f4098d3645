/**
 * How the Durable Object waits for its container server to listen. `@cloudflare/containers` polls
 * every 300 ms and gives each probe a fixed 5 s deadline, so a server that is ready 20 ms after
 * start is found 300 ms later, and a probe that hangs while the container's network comes up costs 5 s
 * before the next try. Here the poll is short and each probe's deadline starts small and doubles, so a
 * hung probe is retried within half a second while a slow network still gets a long one later.
 */
import type { WaitOptions } from "@cloudflare/containers";
import type { PingResponse } from "../../protocol/process.ts";

export const READINESS = {
  /** Pause between failed probes. */
  pollIntervalMs: 25,
  /** Deadline of the first probe; each later one doubles, up to `maxProbeTimeoutMs`. */
  firstProbeTimeoutMs: 500,
  maxProbeTimeoutMs: 4_000,
  /** Longest the whole start may take before the container is reported unavailable. */
  portReadyTimeoutMs: 30_000,
} as const;

interface TcpPort {
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
}

/**
 * Probes `port` until it answers. Returns the probes used; throws the last probe's error once the
 * retries are spent, the container stops (`running()` false) or `options.signal` aborts.
 */
export async function probeUntilReady(port: TcpPort, options: WaitOptions, running: () => boolean, pingUrl: string): Promise<number> {
  const tries = options.retries ?? Math.ceil(READINESS.portReadyTimeoutMs / READINESS.pollIntervalMs);
  const interval = options.waitInterval ?? READINESS.pollIntervalMs;
  let deadline: number = READINESS.firstProbeTimeoutMs;
  for (let probe = 1; ; probe++) {
    const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(deadline)]) : AbortSignal.timeout(deadline);
    try {
      await port.fetch(pingUrl, { signal });
      return probe;
    } catch (error) {
      if (!running() || probe >= tries || options.signal?.aborted) throw error;
    }
    deadline = Math.min(deadline * 2, READINESS.maxProbeTimeoutMs);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** As probeUntilReady, keeping the answer that ended the probing (the server's ping names its container's generation). */
export async function probeKeepingAnswer(
  port: TcpPort,
  options: WaitOptions,
  running: () => boolean,
  pingUrl: string,
): Promise<{ probes: number; answer: Response | undefined }> {
  let answer: Response | undefined;
  const probed = { fetch: async (input: RequestInfo | URL, init?: RequestInit) => (answer = await port.fetch(input, init)) };
  const probes = await probeUntilReady(probed, options, running, pingUrl);
  return { probes, answer };
}

/** A ping's answer, where the server gave one (any answer at all means it listens; an older server may answer another way). */
export async function pingOf(answer: Response | undefined): Promise<PingResponse | undefined> {
  if (!answer?.ok) return undefined;
  try {
    const ping = (await answer.json()) as Partial<PingResponse>;
    return typeof ping.instanceId === "string" ? (ping as PingResponse) : undefined;
  } catch {
    return undefined;
  }
}
