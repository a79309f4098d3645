/**
 * Server memory while one process writes 1 GiB: resident set size of the server process, sampled
 * every 20 ms, against its idle size — once streamed to a reader, once as a background process that
 * nobody reads (the ring buffer drops old output). First, an idle server's own memory beside a bare
 * Node server's (idle-server-memory.ts).
 */
import { streamThrough, fastWriter } from "./container-stream.ts";
import { idleServerMemory } from "./idle-server-memory.ts";
import { mib, postJson, rssBytes, startServerProcess } from "./support.ts";
import type { BenchModule, BenchRow } from "./types.ts";

const BYTES = 1024 * 1024 * 1024;
const AIM = 64 * 1024 * 1024;

async function peakDuring(pid: number, work: () => Promise<unknown>): Promise<number> {
  let peak = rssBytes(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, rssBytes(pid));
}

const bench: BenchModule = {
  name: "container-memory",
  async run() {
    const idleTable = await idleServerMemory();
    const server = await startServerProcess();
    try {
      // Warm the code paths first so JIT and first-use allocations are not counted as growth.
      await streamThrough(server.url, fastWriter(32 * 1024 * 1024));
      const idle = rssBytes(server.pid);
      const streamedPeak = await peakDuring(server.pid, () => streamThrough(server.url, fastWriter(BYTES)));

      const background = async () => {
        const { process: started } = await postJson<{ process: { id: string } }>(server.url, "/api/process/start", {
          command: fastWriter(BYTES),
        });
        for (;;) {
          const reply = await fetch(`${server.url}/api/process/${started.id}`);
          const { process: info } = (await reply.json()) as { process: { status: string; stdoutBytes: number } };
          if (info.status !== "running") {
            if (info.stdoutBytes !== BYTES) throw new Error(`background process wrote ${info.stdoutBytes} bytes`);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const backgroundPeak = await peakDuring(server.pid, background);
      const row = (metric: string, peak: number): BenchRow => ({
        metric,
        ours: `+${mib(peak - idle)} (peak ${mib(peak)})`,
        baseline: mib(idle),
        target: "growth < 64 MiB",
        met: peak - idle < AIM,
      });
      return [
        idleTable,
        {
          title: "Server memory while one process writes 1 GiB",
          baselineLabel: "server RSS when idle",
          rows: [row("RSS growth, streamed to a reader", streamedPeak), row("RSS growth, background process, no reader", backgroundPeak)],
        },
      ];
    } finally {
      await server.close();
    }
  },
};

export default bench;
