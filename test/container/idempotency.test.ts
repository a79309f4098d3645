/**
 * At-most-once runs on the container server: an exec, a streamed exec or a background start whose
 * answer was lost (a proxy cuts the connection after the request reached the server and before the
 * answer came back) is sent again with the same idempotency key or process id, and the retry attaches
 * to the first run: the command ran once, and the retry gets its result or its events. A key reused
 * for another request, a key whose run's record is gone and a run that never started are covered too.
 */
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecEvent } from "../../protocol/events.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { startCuttingProxy, type CuttingProxy } from "../cutting-proxy.ts";
import { call, eventually, startTestServer, type TestServer } from "./helpers.ts";

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One request on a connection of its own (so the proxy sees each attempt as a new connection). */
function send(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(`${url}${path}`, { method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function events(answer: Answer): Promise<ExecEvent[]> {
  const found: ExecEvent[] = [];
  for await (const event of readEventStream<ExecEvent>(Readable.toWeb(Readable.from([Buffer.from(answer.body)])) as ReadableStream<Uint8Array>)) found.push(event);
  return found;
}

/** Appends a line to `file` each time it runs, then prints how many lines the file has. */
const counting = (file: string, pause = "0") => `echo run >> ${file}; sleep ${pause}; wc -l < ${file}`;

describe("a run whose answer was lost, sent again", () => {
  let t: TestServer;
  let proxy: CuttingProxy;
  /** What the proxy does to the next connection (then forgets). */
  let loseNext: "at-answer" | number | undefined;
  /** Lines the command appended to `file` so far (0 before it ran). */
  const runs = (file: string) => (existsSync(join(t.workspace, file)) ? readFileSync(join(t.workspace, file), "utf8").split("\n").filter(Boolean).length : 0);

  beforeAll(async () => {
    t = await startTestServer();
    proxy = await startCuttingProxy(t.url, {
      cutBeforeAnswer: () => {
        const losing = loseNext;
        loseNext = undefined;
        return losing;
      },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  it("exec: the retry gets the first run's result, and the command ran once", async () => {
    const body = { command: counting("exec-runs"), idempotencyKey: "exec-once" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/execute", body)).rejects.toThrow();
    expect(runs("exec-runs")).toBe(1);

    const retry = await send(proxy.url, "/api/execute", body);
    expect(retry.status).toBe(200);
    expect(JSON.parse(retry.body)).toMatchObject({ exitCode: 0, stdout: "1\n", success: true });
    expect(runs("exec-runs")).toBe(1);
  });

  it("exec: a retry that comes while the first run still works waits for it", async () => {
    const body = { command: counting("slow-runs", "1"), idempotencyKey: "exec-slow" };
    loseNext = 200;
    await expect(send(proxy.url, "/api/execute", body)).rejects.toThrow();
    const first = t.server.context.processes.list({ kind: "exec" }).find((record) => record.spec.idempotencyKey === "exec-slow")!;
    expect(first.isLive).toBe(true);

    const retry = JSON.parse((await send(proxy.url, "/api/execute", body)).body);
    expect(retry).toMatchObject({ exitCode: 0, stdout: "1\n", processId: first.id });
    expect(runs("slow-runs")).toBe(1);
  });

  it("exec stream: the retry streams the first run's events from the start", async () => {
    const body = { command: `${counting("stream-runs")}; seq 1 5000`, idempotencyKey: "stream-once" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/execute/stream", body)).rejects.toThrow();

    const retried = await events(await send(proxy.url, "/api/execute/stream", body));
    expect(retried[0]).toMatchObject({ type: "start" });
    const stdout = retried.flatMap((event) => (event.type === "stdout" ? [event.data] : [])).join("");
    expect(stdout).toBe(`1\n${Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join("")}`);
    expect(retried.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });
    expect(runs("stream-runs")).toBe(1);
  });

  it("exec stream: a retry with Last-Event-ID gets only what came after it", async () => {
    const body = { command: "seq 1 3", idempotencyKey: "stream-resume" };
    const all = await events(await send(proxy.url, "/api/execute/stream", body));
    const start = all.find((event) => event.type === "start")!;
    const after = await events(await send(proxy.url, "/api/execute/stream", body, { "last-event-id": String(start.seq) }));
    const startSeq = start.seq!;
    expect(after.map((event) => event.seq)).toEqual(all.filter((event) => event.seq! > startSeq).map((event) => event.seq));
  });

  it("startProcess: the retry answers with the first process", async () => {
    const body = { command: `${counting("start-runs")}; sleep 30`, idempotencyKey: "start-once" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/process/start", body)).rejects.toThrow();
    expect(await eventually(() => runs("start-runs") === 1)).toBe(true);

    const retry = JSON.parse((await send(proxy.url, "/api/process/start", body)).body);
    expect(retry.process.status).toBe("running");
    const listed = (await call(t.url, "GET", "/api/process/list")).body.processes.filter((p: { command: string }) => p.command === body.command);
    expect(listed.map((p: { id: string }) => p.id)).toEqual([retry.process.id]);
    expect(runs("start-runs")).toBe(1);
    await call(t.url, "DELETE", `/api/process/${retry.process.id}?signal=SIGKILL`);
  });

  it("a caller's process id serves as the key: the same request attaches, another is PROCESS_EXISTS", async () => {
    const body = { command: counting("id-runs"), processId: "named-run" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/execute", body)).rejects.toThrow();
    const retry = JSON.parse((await send(proxy.url, "/api/execute", body)).body);
    expect(retry).toMatchObject({ processId: "named-run", stdout: "1\n" });
    expect(runs("id-runs")).toBe(1);

    const started = { command: "sleep 30", processId: "named-start" };
    const first = JSON.parse((await send(t.url, "/api/process/start", started)).body);
    const again = JSON.parse((await send(t.url, "/api/process/start", started)).body);
    expect(again.process.pid).toBe(first.process.pid);
    const other = await send(t.url, "/api/process/start", { command: "sleep 31", processId: "named-start" });
    expect(other.status).toBe(409);
    expect(JSON.parse(other.body).code).toBe("PROCESS_EXISTS");
    await call(t.url, "DELETE", "/api/process/named-start?signal=SIGKILL");
  });

  it("copies of one request arriving together start one run", async () => {
    const body = { command: counting("together-runs", "0.3"), idempotencyKey: "together" };
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(t.url, "/api/execute", body)));
    const ids = new Set(answers.map((answer) => JSON.parse(answer.body).processId));
    expect(ids.size).toBe(1);
    expect(runs("together-runs")).toBe(1);
  });

  it("a key used again for another request is refused, and nothing runs", async () => {
    await send(t.url, "/api/execute", { command: "true", idempotencyKey: "one-use" });
    const other = await send(t.url, "/api/execute", { command: counting("never-runs"), idempotencyKey: "one-use" });
    expect(other.status).toBe(422);
    expect(JSON.parse(other.body)).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED", context: { idempotencyKey: "one-use" } });
    // The same key on another route is another request too.
    const started = await send(t.url, "/api/process/start", { command: "true", idempotencyKey: "one-use" });
    expect(JSON.parse(started.body).code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(runs("never-runs")).toBe(0);
  });

  it("a run that never started frees its key", async () => {
    const body = { command: counting("late-runs"), cwd: join(t.workspace, "not-yet"), idempotencyKey: "spawn-failed" };
    const failed = await send(t.url, "/api/execute", body);
    expect(failed.status).toBeGreaterThanOrEqual(400);
    await send(t.url, "/api/execute", { command: "mkdir not-yet" });
    const retry = JSON.parse((await send(t.url, "/api/execute", body)).body);
    expect(retry).toMatchObject({ exitCode: 0 });
  });

  it("a named exec keeps its result for a retry, counted among the kept execs' bytes; an unnamed one lets it go", async () => {
    const before = t.server.context.processes.finishedExecs.bytes;
    const named = JSON.parse((await send(t.url, "/api/execute", { command: "head -c 2000000 /dev/zero", idempotencyKey: "big" })).body);
    const record = t.server.context.processes.find(named.processId)!;
    expect(record.capture).toBeDefined();
    expect(t.server.context.processes.finishedExecs.bytes - before).toBeGreaterThanOrEqual(2_000_000);
    const again = JSON.parse((await send(t.url, "/api/execute", { command: "head -c 2000000 /dev/zero", idempotencyKey: "big" })).body);
    expect(again.stdout.length).toBe(2_000_000);

    const unnamed = JSON.parse((await send(t.url, "/api/execute", { command: "head -c 2000000 /dev/zero" })).body);
    expect(t.server.context.processes.find(unnamed.processId)!.capture).toBeUndefined();
  });

  it("rejects a malformed key", async () => {
    const answer = await send(t.url, "/api/execute", { command: "true", idempotencyKey: "has space" });
    expect(answer.status).toBe(400);
  });
});

describe("a key whose run's record is gone", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ finishedExecRetentionMs: 100 });
  });
  afterAll(async () => {
    await t.close();
  });

  it("answers IDEMPOTENT_RUN_GONE with how the run ended, and runs nothing", async () => {
    const body = { command: "echo run >> gone-runs; exit 3", idempotencyKey: "gone" };
    const first = JSON.parse((await send(t.url, "/api/execute", body)).body);
    expect(first.exitCode).toBe(3);
    expect(await eventually(() => t.server.context.processes.find(first.processId) === undefined)).toBe(true);

    const retry = await send(t.url, "/api/execute", body);
    expect(retry.status).toBe(410);
    expect(JSON.parse(retry.body)).toMatchObject({ code: "IDEMPOTENT_RUN_GONE", context: { idempotencyKey: "gone", processId: first.processId, exitCode: 3 } });
    expect(readFileSync(join(t.workspace, "gone-runs"), "utf8")).toBe("run\n");
  });
});

describe("a code cell whose answer was lost, sent again", () => {
  let t: TestServer;
  let proxy: CuttingProxy;
  let loseNext: "at-answer" | number | undefined;
  beforeAll(async () => {
    t = await startTestServer();
    proxy = await startCuttingProxy(t.url, {
      cutBeforeAnswer: () => {
        const losing = loseNext;
        loseNext = undefined;
        return losing;
      },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  /** A JavaScript cell that counts its runs in a global, so a second run would show. */
  const cell = "globalThis.runs = (globalThis.runs ?? 0) + 1; globalThis.runs";

  it("runCode: the retry gets the first run's Execution, and the cell ran once", async () => {
    const body = { code: cell, language: "javascript", idempotencyKey: "cell-once" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/code/run", body)).rejects.toThrow();
    const retry = JSON.parse((await send(proxy.url, "/api/code/run", body)).body);
    expect(retry.results[0].text).toBe("1");
    const after = JSON.parse((await send(t.url, "/api/code/run", { code: "globalThis.runs", language: "javascript" })).body);
    expect(after.results[0].text).toBe("1");
  });

  it("runCode stream: the retry streams the first run's events; another request under the key is refused", async () => {
    const body = { code: `${cell}; console.log("ran")`, language: "javascript", idempotencyKey: "cell-stream" };
    loseNext = "at-answer";
    await expect(send(proxy.url, "/api/code/run/stream", body)).rejects.toThrow();
    const retry = await send(proxy.url, "/api/code/run/stream", body);
    expect(retry.body).toContain("ran");
    expect(retry.body).toContain("event: complete");
    const other = await send(t.url, "/api/code/run/stream", { ...body, code: "2" });
    expect(JSON.parse(other.body).code).toBe("IDEMPOTENCY_KEY_REUSED");
  });
});
