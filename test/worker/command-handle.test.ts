/**
 * run(…, { wait: false }) and attach(): command handles over Workers RPC and HTTP, through
 * connections that break again and again. The Worker, the Durable Object and the container are
 * real; the only faults are the connections we cut.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { OutputChunk } from "../../src/client/api.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import { SandboxClient } from "../../src/client/sandbox-client.ts";
import { SandboxConnectionError } from "../../src/rpc/errors.ts";
import { rpcTransport } from "../../src/rpc/stub-transport.ts";
import { cuttingFetch, cuttingRpc, eventually, sandboxPool, uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));
const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

const lines = (count: number, prefix = "") => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}\n`).join("");
const textOf = (chunks: OutputChunk[], stream: "stdout" | "stderr") =>
  chunks.filter((chunk) => chunk.stream === stream).map((chunk) => chunk.data).join("");

/** A sandbox client over Workers RPC whose streams are cut as `cutAfterBytes` says. */
function cutSandbox(label: string, cutAfterBytes: (n: number) => number | undefined, retry = { attempts: 2, baseDelayMs: 5 }) {
  const id = uniqueId(label);
  const cutting = cuttingRpc(rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id))), cutAfterBytes);
  return { sandbox: new SandboxClient(id, { rpc: cutting.rpc, retry }), cutting };
}

async function collectChunks(handle: AsyncIterable<OutputChunk>): Promise<OutputChunk[]> {
  const chunks: OutputChunk[] = [];
  for await (const chunk of handle) chunks.push(chunk);
  return chunks;
}

describe("run", () => {
  it("hands out stdout and stderr in the order written, with offsets, and the container's result", async () => {
    const sandbox = sandboxes.create("run");
    // Two pipes keep the order of writes only as far as their reader keeps up: each line waits until the
    // one before it has arrived here (the test then makes the file the next line waits for).
    const step = (n: number) => `until [ -e gate-${n} ]; do sleep 0.01; done`;
    const script = ["echo out1", "echo err1 >&2", "echo out2", "echo err2 >&2", "echo out3", "echo err3 >&2"];
    const handle = await sandbox.run(`${script.map((line, i) => (i === 0 ? line : `${step(i)}; ${line}`)).join("; ")}; exit 3`, { wait: false });
    expect(handle.commandId).toMatch(/^proc_/);
    expect(handle.pid).toBeGreaterThan(0);
    const chunks: OutputChunk[] = [];
    for await (const chunk of handle) {
      chunks.push(chunk);
      await sandbox.run(`touch gate-${chunks.length}`);
    }
    expect(chunks.map((chunk) => `${chunk.stream}:${chunk.data}`)).toEqual(["out1", "err1", "out2", "err2", "out3", "err3"].map((l) => `${l.startsWith("out") ? "stdout" : "stderr"}:${l}\n`));
    expect(chunks.filter((chunk) => chunk.stream === "stdout").map((chunk) => chunk.offset)).toEqual([0, 5, 10]);
    expect([handle.stdoutOffset, handle.stderrOffset]).toEqual([15, 15]);
    // Everything was iterated over: the result carries none of it again.
    expect(await handle.result).toMatchObject({ success: false, exitCode: 3, stdout: "", stderr: "", processId: handle.commandId });
    // Waiting (the default) gives the result with all the output.
    expect(await sandbox.run("echo whole; echo err >&2")).toMatchObject({ success: true, exitCode: 0, stdout: "whole\n", stderr: "err\n" });
  });

  it("takes stdin while it runs, as text and as bytes", async () => {
    const sandbox = sandboxes.create("run-stdin");
    const handle = await sandbox.run("cat; echo done", { wait: false, keepStdinOpen: true, encoding: "base64" });
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    await handle.sendStdin("text\n");
    await handle.sendStdin(every);
    await handle.closeStdin();
    const result = await handle.result;
    expect(result.success).toBe(true);
    const bytes = Uint8Array.from(atob(result.stdout), (c) => c.charCodeAt(0));
    expect([...bytes]).toEqual([...new TextEncoder().encode("text\n"), ...every, ...new TextEncoder().encode("done\n")]);
  });
});

describe("a command handle on a connection that keeps breaking", () => {
  it("over Workers RPC: the bytes received are the bytes written, with the retry budget reset by every reconnect", async () => {
    // Six cuts at uneven points (inside events), with a budget of one failed attempt at a time.
    const { sandbox, cutting } = cutSandbox("handle-rpc-cuts", (n) => (n < 6 ? 70_000 + n * 41_111 : undefined), { attempts: 1, baseDelayMs: 5 });
    const handle = await sandbox.run("seq 1 300000", { wait: false });
    const chunks = await collectChunks(handle);
    expect(textOf(chunks, "stdout")).toBe(lines(300_000));
    expect(cutting.opened.filter((call) => call.startsWith("resumeExecStream"))).toHaveLength(6);
    expect(handle.stdoutOffset).toBe(lines(300_000).length);
    expect(await handle.result).toMatchObject({ success: true, exitCode: 0 });
    await sandbox.destroy();
  });

  it("over HTTP: an interleaved stdout/stderr loop arrives whole on both streams", async () => {
    const opened: string[] = [];
    const sandbox = getHttpSandbox(uniqueId("handle-http-cuts"), {
      url: "http://sandbox.test",
      token: env.SANDBOX_API_TOKEN!,
      retry: { attempts: 1, baseDelayMs: 5 },
      // Five cuts, each within 52 kB (180 kB in all): well inside the ~380 kB of output, however it is framed.
      fetch: cuttingFetch(workerFetch, (n) => (n < 5 ? 20_000 + n * 7_919 : undefined), opened),
    });
    const handle = await sandbox.run("for i in $(seq 1 20000); do echo out-$i; echo err-$i >&2; done", { wait: false });
    const chunks = await collectChunks(handle);
    expect(textOf(chunks, "stdout")).toBe(lines(20_000, "out-"));
    expect(textOf(chunks, "stderr")).toBe(lines(20_000, "err-"));
    const resumes = opened.filter((line) => /\/exec\/[^/]+\/stream/.test(line));
    expect(resumes).toHaveLength(5);
    expect(resumes[0]).toMatch(/stdoutOffset=\d+&stderrOffset=\d+ \d+$/); // byte offsets, and Last-Event-ID
    expect(await handle.result).toMatchObject({ success: true });
    await sandbox.destroy();
  });
});

describe("aborting and dropping", () => {
  it("aborting kills the command and ends the handle with the signal's reason", async () => {
    const sandbox = sandboxes.create("handle-abort");
    const controller = new AbortController();
    const handle = await sandbox.run("echo tick; sleep 30", { wait: false, signal: controller.signal });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of handle) {
        seen.push(chunk.data);
        controller.abort(new Error("enough"));
      }
    })();
    await expect(reading).rejects.toThrow("enough");
    await expect(handle.result).rejects.toThrow("enough");
    expect(seen).toEqual(["tick\n"]);
    const stopped = await eventually(async () => (await sandbox.getProcess(handle.commandId))?.status === "killed", 10_000);
    expect(stopped).toBe(true);
  });

  it("a dropped connection never kills: after giving up, reconnect() goes on with nothing lost or repeated", async () => {
    const { sandbox, cutting } = cutSandbox("handle-drop", (n) => (n === 0 ? 400 : undefined), { attempts: 1, baseDelayMs: 5 });
    const handle = await sandbox.run("for i in $(seq 1 60); do echo line-$i; sleep 0.01; done", { wait: false });
    const before: OutputChunk[] = [];
    cutting.down = true; // the cut comes, and every reconnect fails
    const failure = await (async () => {
      for await (const chunk of handle) before.push(chunk);
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SandboxConnectionError);
    expect((await sandbox.getProcess(handle.commandId))?.status).toBe("running");

    cutting.down = false;
    const again = await handle.reconnect();
    expect(again.commandId).toBe(handle.commandId);
    const after = await collectChunks(again);
    expect(textOf(before, "stdout") + textOf(after, "stdout")).toBe(lines(60, "line-"));
    expect(before.length).toBeGreaterThan(0);
    expect(await again.result).toMatchObject({ success: true, exitCode: 0 });
  });

  it("reconnect() hands over mid-stream: the old handle stops, the new one goes on, both results are the command's", async () => {
    const sandbox = sandboxes.create("handle-reconnect");
    const handle = await sandbox.run("for i in $(seq 1 40); do echo line-$i; sleep 0.01; done; exit 4", { wait: false });
    const before: OutputChunk[] = [];
    for await (const chunk of handle) {
      before.push(chunk);
      if (before.length === 5) break;
    }
    const next = await handle.reconnect();
    expect(await collectChunks(handle)).toEqual([]);
    const after = await collectChunks(next);
    expect(textOf(before, "stdout") + textOf(after, "stdout")).toBe(lines(40, "line-"));
    expect(await next.result).toMatchObject({ exitCode: 4, success: false });
    expect(await handle.result).toMatchObject({ exitCode: 4, success: false });
    // Once it has ended, a reconnect gives its end again, and no output twice.
    const late = await next.reconnect();
    expect(await collectChunks(late)).toEqual([]);
    expect(await late.result).toMatchObject({ exitCode: 4, stdout: "" });
  });
});

describe("attach", () => {
  it("finds a running command from another client by its id and goes on from the offsets given", async () => {
    const id = uniqueId("attach");
    const overRpc = new SandboxClient(id, { rpc: rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id))) });
    const handle = await overRpc.run("for i in $(seq 1 80); do echo line-$i; sleep 0.01; done", { wait: false });
    const seen: OutputChunk[] = [];
    for await (const chunk of handle) {
      seen.push(chunk);
      if (textOf(seen, "stdout").length >= 60) break;
    }
    const overHttp = getHttpSandbox(id, { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: workerFetch });
    const attached = await overHttp.attach(handle.commandId, { stdoutOffset: handle.stdoutOffset, stderrOffset: handle.stderrOffset });
    expect(attached.pid).toBe(handle.pid);
    const rest = await collectChunks(attached);
    expect(rest[0]!.offset).toBe(handle.stdoutOffset);
    expect(textOf(seen, "stdout") + textOf(rest, "stdout")).toBe(lines(80, "line-"));
    expect(await attached.result).toMatchObject({ success: true, exitCode: 0 });
    await overRpc.destroy();
  });

  it("says how many bytes the sandbox no longer holds, once, however often the stream breaks", async () => {
    const { sandbox, cutting } = cutSandbox("attach-dropped", (n) => (n < 3 ? 30_000 : undefined));
    // A buffered exec's log keeps only its last MiB; its first two are gone by the time anyone attaches.
    const total = 3 * 1024 * 1024;
    const result = await sandbox.exec(`head -c ${total} /dev/zero | tr '\\0' 'x'`, { processId: "big-buffered" });
    expect(result.stdout.length).toBe(total);
    const handle = await sandbox.attach("big-buffered");
    const chunks = await collectChunks(handle);
    const dropped = chunks.filter((chunk) => chunk.dropped !== undefined);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ stream: "stdout", data: "" });
    expect(dropped[0]!.dropped! + textOf(chunks, "stdout").length).toBe(total);
    expect(dropped[0]!.offset).toBe(dropped[0]!.dropped);
    expect(handle.dropped).toEqual({ stdout: dropped[0]!.dropped, stderr: 0 });
    expect(handle.stdoutOffset).toBe(total);
    expect(cutting.opened.length).toBeGreaterThanOrEqual(4);
    expect(await handle.result).toMatchObject({ success: true });
    await sandbox.destroy();
  });
});
