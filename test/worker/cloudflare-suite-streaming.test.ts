/**
 * Cloudflare's streaming cases (their streaming-operations workflow and stream-controller race tests),
 * ported to getSandbox: exit codes and stderr of streamed commands, output that arrives over time, a
 * file read as a stream, a stream that keeps the sandbox awake past sleepAfter, and log streams that
 * readers cancel at awkward moments. Ours gives execStream and streamProcessLogs as async iterables of
 * events (theirs: an SSE stream for parseSSEStream), and readFileStream as the file's bytes.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { ExecEvent } from "../../src/client/index.ts";
import { eventually, runtimeState } from "./helpers.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

async function events(stream: AsyncIterable<ExecEvent>): Promise<ExecEvent[]> {
  const out: ExecEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

const output = (list: ExecEvent[], type: "stdout" | "stderr") => list.flatMap((e) => (e.type === type ? [e.data] : [])).join("");
const completion = (list: ExecEvent[]) => list.find((e) => e.type === "complete") as { exitCode: number } | undefined;

describe("streaming operations", () => {
  const sandbox = sandboxes.create("cf-streaming");

  it("ends a failing command's stream with its non-zero exit code", async () => {
    expect(completion(await events(sandbox.execStream("false")))?.exitCode).not.toBe(0);
  });

  it("gives 127 and the shell's message for a command that does not exist", async () => {
    const list = await events(sandbox.execStream("nonexistentcommand123"));
    expect(completion(list)?.exitCode).toBe(127);
    expect(output(list, "stderr").toLowerCase()).toMatch(/command not found|not found/);
  });

  it("delivers output as it is written, over time", async () => {
    // After its first chunk the command waits for the test to have seen it: output held back until
    // the end would never arrive, and the command would fail after 20 s.
    const command =
      'echo "Chunk 1"; for i in $(seq 400); do [ -e /workspace/chunk-seen ] && break; sleep 0.05; done; [ -e /workspace/chunk-seen ] || exit 9; for i in 2 3; do echo "Chunk $i"; sleep 0.1; done; echo DONE';
    const list: ExecEvent[] = [];
    for await (const event of sandbox.execStream(command)) {
      list.push(event);
      if (event.type === "stdout" && list.filter((seen) => seen.type === "stdout").length === 1) await sandbox.writeFile("/workspace/chunk-seen", "");
    }
    expect(output(list, "stdout")).toBe("Chunk 1\nChunk 2\nChunk 3\nDONE\n");
    expect(completion(list)?.exitCode).toBe(0);
  });

  it("streams a file's contents", async () => {
    const content = "Line 1\nLine 2\nLine 3\nThis is streaming file content.";
    await sandbox.writeFile("/workspace/stream-test.txt", content);
    const text = await new Response(await sandbox.readFileStream("/workspace/stream-test.txt")).text();
    expect(text).toBe(content);
  });
});

describe("a stream and sleepAfter", () => {
  it("keeps the sandbox awake during execStream beyond sleepAfter, and lets it sleep after", async () => {
    const sandbox = sandboxes.create("cf-stream-sleep", { sleepAfter: "3s" });
    const started = Date.now();
    const list = await events(sandbox.execStream("bash -c 'sleep 5; printf done'"));
    expect(Date.now() - started).toBeGreaterThan(4_500);
    expect(output(list, "stdout")).toBe("done");
    expect(completion(list)?.exitCode).toBe(0);
    expect(await eventually(async () => !(await runtimeState(sandbox.id)).running, 30_000, 500)).toBe(true);
  });
});

describe("stream cancellation races", () => {
  const sandbox = sandboxes.create("cf-stream-race");

  it("cancels a log stream without harm to the sandbox", async () => {
    const process = await sandbox.startProcess('for i in $(seq 1 50); do echo "line $i"; sleep 0.02; done');
    for await (const event of sandbox.streamProcessLogs(process.id)) {
      if (event.type === "stdout") break;
    }
    expect((await sandbox.exec("echo healthy")).stdout).toContain("healthy");
    await process.kill();
  });

  it("survives rapid connects and disconnects", async () => {
    const process = await sandbox.startProcess('while true; do echo "$(date +%s%N)"; sleep 0.05; done');
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      const reading = (async () => {
        for await (const _event of sandbox.streamProcessLogs(process.id, { signal: controller.signal })) break;
      })();
      controller.abort();
      await reading.catch(() => undefined);
    }
    expect((await sandbox.exec("echo post-rapid-check")).stdout).toContain("post-rapid-check");
    expect(await process.getStatus()).toBe("running");
    await process.kill();
  });

  it("survives a cancel while the process completes", async () => {
    const process = await sandbox.startProcess('bash -c "echo start; sleep 0.1; echo done"');
    for await (const _event of sandbox.streamProcessLogs(process.id)) break;
    expect((await process.waitForExit(10_000)).exitCode).toBe(0);
    expect((await sandbox.exec("echo completion-check")).stdout).toContain("completion-check");
  });

  it("serves concurrent streams of the same process", async () => {
    const process = await sandbox.startProcess('for i in $(seq 1 100); do echo "out $i"; sleep 0.02; done');
    const readers = [0, 1, 2].map(async () => {
      let seen = 0;
      for await (const event of sandbox.streamProcessLogs(process.id)) {
        if (event.type === "stdout" && ++seen >= 3) break;
      }
      return seen;
    });
    expect(await Promise.all(readers)).toEqual([3, 3, 3]);
    expect((await sandbox.exec("echo concurrent-check")).stdout).toContain("concurrent-check");
    await process.kill();
  });

  it("cancels an execStream gracefully", async () => {
    for await (const event of sandbox.execStream('for i in $(seq 1 50); do echo "tick $i"; sleep 0.05; done')) {
      if (event.type === "stdout") break;
    }
    expect((await sandbox.exec("echo exec-cancel-check")).stdout).toContain("exec-cancel-check");
  });
});
