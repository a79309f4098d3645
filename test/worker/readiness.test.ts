/**
 * The Durable Object's readiness probe (src/sandbox/readiness.ts) against real ports: a server that
 * answers at once takes one probe; a port that accepts connections but never answers costs the first
 * probe's short deadline, not the package's fixed 5 s, before the next try; the container stopping or
 * the retries running out end the wait with the probe's error.
 */
import { describe, expect, it } from "vitest";
import { probeUntilReady, READINESS } from "../../src/sandbox/readiness.ts";

/** A port whose first `hangs` requests never get an answer, and whose later ones get 200. */
function portThatHangs(hangs: number) {
  let seen = 0;
  return {
    get seen() {
      return seen;
    },
    fetch(_input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      seen++;
      if (seen > hangs) return Promise.resolve(new Response("ok"));
      return new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    },
  };
}

describe("readiness probe", () => {
  it("is answered by a ready server in one probe", async () => {
    const port = portThatHangs(0);
    expect(await probeUntilReady(port, { portToCheck: 3000 }, () => true, "http://ping")).toBe(1);
  });

  it("gives up on a hung probe after its short deadline and tries again", async () => {
    const port = portThatHangs(1);
    const started = Date.now();
    expect(await probeUntilReady(port, { portToCheck: 3000 }, () => true, "http://ping")).toBe(2);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(READINESS.firstProbeTimeoutMs);
    expect(waited).toBeLessThan(5_000);
  });

  it("throws once the container stops or the retries run out", async () => {
    await expect(probeUntilReady(portThatHangs(Infinity), { portToCheck: 3000, retries: 1 }, () => true, "http://ping")).rejects.toThrow();
    const stopped = portThatHangs(Infinity);
    await expect(probeUntilReady(stopped, { portToCheck: 3000, retries: 100 }, () => false, "http://ping")).rejects.toThrow();
    expect(stopped.seen).toBe(1);
  });
});
