/**
 * The built image on the instance type wrangler.toml deploys it on: its server runs in a control
 * group holding the instance's memory (as `npm run test:image` reads it from wrangler.toml), and a
 * busy sandbox's load must fit: start-up, 20 concurrent commands, a Python cell drawing a
 * matplotlib figure, a terminal, and 1 GiB of output read through the streaming route, all at once.
 * The kernel's high-water mark of the group's memory is reported (page cache included, which the
 * kernel reclaims before it kills anything; the image's files are dropped from the cache first, so
 * the pages of every binary and library the container reads count); the proof is that nothing was
 * killed and everything answered. Then the wall itself is attacked: a command that wants more than the instance has is
 * killed, and the server goes on answering.
 *
 * Runs under `npm run test:image` only, as root (control groups); figures go to the image's report.
 */
import { appendFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecEvent } from "../../protocol/events.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { CODE_ROUTES } from "../../protocol/code.ts";
import { EXEC_ROUTES } from "../../protocol/process.ts";
import { TERMINAL_ROUTES } from "../../protocol/terminals.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { call } from "./helpers.ts";
import { startImageServer, testImage, type ImageDescriptor, type ImageServer } from "./image-server.ts";
import { makeInstanceGroup, type InstanceGroup } from "./instance-group.ts";
import { evictFromPageCache } from "./page-cache.ts";

const image = testImage();
const instance = image?.instance;
const STREAMED_BYTES = 1024 ** 3;
const BURST = 20;
const MIB = 1024 ** 2;

/** One figure for `npm run test:image`'s summary. */
function report(descriptor: ImageDescriptor, figure: Record<string, unknown>): void {
  if (descriptor.reportFile) appendFileSync(descriptor.reportFile, `${JSON.stringify(figure)}\n`);
}

/** Reads an exec stream to its end, counting stdout bytes without keeping them. */
async function streamedStdout(url: string, command: string): Promise<{ bytes: number; exitCode: number | undefined }> {
  const response = await fetch(url + EXEC_ROUTES.stream, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command }) });
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status}`);
  let bytes = 0;
  let exitCode: number | undefined;
  for await (const event of readEventStream<ExecEvent>(response.body)) {
    if (event.type === "stdout") bytes += Buffer.byteLength(event.data);
    else if (event.type === "complete") exitCode = event.exitCode;
    else if (event.type !== "start") throw new Error(`unexpected ${event.type} event: ${JSON.stringify(event)}`);
  }
  return { bytes, exitCode };
}

const exec = async (url: string, command: string) => (await call(url, "POST", EXEC_ROUTES.execute, { command })).body as { exitCode: number; stdout: string; stderr: string };

describe.skipIf(image === undefined || instance === undefined)("the image on its instance type", () => {
  let group: InstanceGroup | undefined;
  let server: ImageServer;
  let firstCommandMs = 0;

  beforeAll(async () => {
    group = makeInstanceGroup(`image-${process.pid}`, { memoryBytes: instance!.memoryBytes });
    if (!group) throw new Error("no control group can be made here (run npm run test:image as root)");
    // As on a fresh instance: the image's files are read anew, and charged to this container.
    evictFromPageCache(image!.rootfs);
    server = await startImageServer(image!, { procsFiles: group.procsFiles, pollMs: 2 });
    expect((await exec(server.url, "echo first")).stdout).toBe("first\n");
    firstCommandMs = performance.now() - server.startedAt;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    try {
      group?.remove();
    } catch {
      // a process not yet reaped keeps the group; the next run's group has its own name
    }
  });

  it("starts, and answers its first command", () => {
    const readyMs = server.listeningAt - server.startedAt;
    report(image!, { figure: "start-up", readyMs: Math.round(readyMs), firstCommandMs: Math.round(firstCommandMs) });
    console.log(`image start-up: listening after ${readyMs.toFixed(0)} ms, first command's result after ${firstCommandMs.toFixed(0)} ms`);
    expect(readyMs).toBeGreaterThan(0);
  });

  it(`fits a busy sandbox in ${instance ? instance.memoryBytes / MIB : 0} MiB: 20 commands, a matplotlib cell, a terminal and 1 GiB streamed, at once`, async () => {
    const streamed = streamedStdout(server.url, `head -c ${STREAMED_BYTES} /dev/zero | tr '\\0' x`);
    const burst = Promise.all(
      Array.from({ length: BURST }, (_, i) => exec(server.url, `python3 -c "import json; print(json.dumps(sum(range(${i} * 100000))))" && ls /usr/lib >/dev/null && echo ${i}`)),
    );
    const cell = (async () => {
      const context = await call(server.url, "POST", CODE_ROUTES.contexts, { language: "python" });
      expect(context.status).toBe(200);
      const code = ["import matplotlib.pyplot as plt, numpy as np, pandas as pd", "df = pd.DataFrame({'x': np.arange(1000), 'y': np.random.rand(1000)})", "df.plot(x='x', y='y')", "plt.show()"].join("\n");
      return (await call(server.url, "POST", CODE_ROUTES.run, { contextId: context.body.context.id, code })).body;
    })();
    const terminal = (async () => {
      const created = await call(server.url, "POST", TERMINAL_ROUTES.list, { command: "ps -e | wc -l; echo pty-$((6*7)); exit 3", cols: 80, rows: 24 });
      expect(created.status).toBe(200);
      const id = created.body.terminal.id as string;
      const done = await call(server.url, "GET", TERMINAL_ROUTES.wait(id));
      const output = await call(server.url, "GET", `${TERMINAL_ROUTES.output(id)}?since=0`);
      return { exitCode: done.body.terminal.exitCode as number, text: Buffer.from(output.body.data, "base64").toString("utf8") };
    })();

    const [stream, commands, execution, term] = await Promise.all([streamed, burst, cell, terminal]);
    expect(stream).toEqual({ bytes: STREAMED_BYTES, exitCode: 0 });
    expect(commands.map((result) => [result.exitCode, result.stdout.trim().split("\n").pop()])).toEqual(Array.from({ length: BURST }, (_, i) => [0, String(i)]));
    expect(execution.error).toBeUndefined();
    expect(execution.results.filter((result: { png?: string }) => result.png).length).toBe(1);
    expect(term.exitCode).toBe(3);
    expect(term.text).toContain("pty-42");
    expect((await call(server.url, "GET", INFO_ROUTES.ping)).status).toBe(200);

    const peak = group!.peakBytes();
    report(image!, { figure: "memory", instance: instance!.name, limitBytes: instance!.memoryBytes, peakBytes: peak });
    console.log(`memory high-water mark on ${instance!.name}: ${(peak / MIB).toFixed(0)} MiB of ${instance!.memoryBytes / MIB} MiB`);
    expect(group!.oomKills()).toBe(0);
    expect(peak).toBeLessThanOrEqual(instance!.memoryBytes);
  }, 300_000);

  it("holds the instance's memory: a command that wants more is killed, and the server answers on", async () => {
    const hog = await exec(server.url, `python3 -c "b = bytearray(${instance!.memoryBytes}); b[::4096] = b'x' * len(b[::4096]); print('survived')"`);
    expect(hog.stdout).not.toContain("survived");
    expect(hog.exitCode).toBe(128 + 9);
    expect(group!.oomKills()).toBeGreaterThan(0);
    expect((await exec(server.url, "echo still here")).stdout).toBe("still here\n");
  }, 120_000);
});
