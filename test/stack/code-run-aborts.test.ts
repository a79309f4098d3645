/**
 * Buffered `/v1/.../code/run` callers that give up, through the whole stack as `npm start` runs it
 * (wrangler's dev server in front, as Cloudflare's edge is): Node's fetch aborted with an
 * AbortSignal, and a Python client killed mid-run, each sending `Accept-Encoding: gzip` as they do.
 * Their cells are interrupted and their contexts free again with their state. They were not: the
 * edge gzipped the JSON answer for them, held the probing spaces in its compressor, and never noticed
 * the caller was gone (curl, which asks for no compression, was noticed). And a sandbox destroyed
 * under a run ends it with a coded error: the buffered answer's JSON body, the stream's `error` event.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { CodeEvent, Execution } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { CodeContextBusyError, getHttpSandbox, SandboxError } from "../../src/client/index.ts";
import { httpConnection } from "./helpers.ts";

interface Child {
  stdout: { once(event: "data", listener: (chunk: unknown) => void): void };
  kill(signal: string): boolean;
  once(event: "exit", listener: () => void): void;
}
const childProcess = (process as unknown as {
  getBuiltinModule(id: "node:child_process"): { spawn(command: string, args: string[], options: { stdio: ["ignore", "pipe", "inherit"] }): Child };
}).getBuiltinModule("node:child_process");

const sandboxes: ReturnType<typeof getHttpSandbox>[] = [];
afterAll(() => Promise.all(sandboxes.map((sandbox) => sandbox.destroy().catch(() => undefined))));

function sandboxFor(label: string) {
  const connection = httpConnection(label);
  const sandbox = getHttpSandbox(connection.sandboxId, connection);
  sandboxes.push(sandbox);
  const runUrl = `${connection.url}/v1/sandboxes/${connection.sandboxId}/code/run`;
  return { sandbox, connection, runUrl, headers: { authorization: `Bearer ${connection.token}`, "content-type": "application/json" } };
}

/** A cell that sleeps for two minutes, and says so in its context if it was interrupted. */
const LONG_CELL = "import time\ntry:\n    time.sleep(120)\nexcept KeyboardInterrupt:\n    interrupted = True\n    raise";
const text = (execution: Execution) => execution.results.find((result) => result.isMainResult)?.text;

/** Runs `code` with wait: false until the context is free (a few seconds at most); fails after. */
async function whenFree(run: () => Promise<Execution>, tries = 100): Promise<Execution> {
  for (let i = 0; i < tries; i++) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof CodeContextBusyError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error("the context stayed busy");
}

/** Waits until the context is running a cell. */
async function untilBusy(sandbox: ReturnType<typeof getHttpSandbox>, context: { id: string }): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const answer = await sandbox.runCode("0", { context: context.id, wait: false }).then(
      () => "free",
      (error: unknown) => (error instanceof CodeContextBusyError ? "busy" : Promise.reject(error)),
    );
    if (answer === "busy") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the cell never started");
}

describe("a buffered code run whose caller gives up", () => {
  it("is interrupted when Node's fetch is aborted", async () => {
    const { sandbox, runUrl, headers } = sandboxFor("abort-node");
    const context = await sandbox.createCodeContext({ language: "python" });
    await sandbox.runCode("kept = 'state'", { context });
    const abort = new AbortController();
    const answer = await fetch(runUrl, { method: "POST", headers, body: JSON.stringify({ contextId: context.id, code: LONG_CELL }), signal: abort.signal });
    expect(answer.status).toBe(200);
    const body = answer.text().catch((error: unknown) => error);
    await untilBusy(sandbox, context);
    abort.abort();
    expect(await body).toMatchObject({ name: "AbortError" });

    const after = await whenFree(() => sandbox.runCode("(kept, interrupted)", { context, wait: false }));
    expect(text(after)).toBe("('state', True)");
  });

  it("is interrupted when a Python client asking for gzip is killed", async () => {
    const { sandbox, runUrl, headers } = sandboxFor("abort-python");
    const context = await sandbox.createCodeContext({ language: "python" });
    const client = [
      "import json, sys, urllib.request",
      "request = urllib.request.Request(sys.argv[1], data=json.dumps({'contextId': sys.argv[2], 'code': sys.argv[3]}).encode(),",
      "    headers={'Authorization': sys.argv[4], 'Content-Type': 'application/json', 'Accept-Encoding': 'gzip, deflate'})",
      "answer = urllib.request.urlopen(request, timeout=300)",
      "print(answer.status, flush=True)",
      "answer.read()",
    ].join("\n");
    const python = childProcess.spawn("python3", ["-c", client, runUrl, context.id, LONG_CELL, headers.authorization], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<void>((resolve) => python.once("exit", resolve));
    await new Promise((resolve) => python.stdout.once("data", resolve));
    await untilBusy(sandbox, context);
    python.kill("SIGKILL");
    await exited;

    const after = await whenFree(() => sandbox.runCode("interrupted", { context, wait: false }));
    expect(text(after)).toBe("True");
  });
});

describe("a sandbox destroyed under a code run", () => {
  it("ends a buffered run with the error's JSON body, which the HTTP client raises with its code", async () => {
    const { sandbox, runUrl, headers } = sandboxFor("destroy-buffered");
    const context = await sandbox.createCodeContext({ language: "python" });
    const raw = fetch(runUrl, { method: "POST", headers, body: JSON.stringify({ contextId: context.id, code: LONG_CELL }) });
    await untilBusy(sandbox, context);
    await sandbox.destroy();
    const answer = await raw;
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { success: boolean; code: string };
    expect(body).toMatchObject({ success: false, code: "CONTAINER_UNAVAILABLE" });
  });

  it("raises the code from the HTTP client's runCode", async () => {
    const { sandbox } = sandboxFor("destroy-client");
    const context = await sandbox.createCodeContext({ language: "python" });
    const run = sandbox.runCode(LONG_CELL, { context }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await untilBusy(sandbox, context);
    await sandbox.destroy();
    const error = await run;
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe("CONTAINER_UNAVAILABLE");
  });

  it("ends a streamed run with a coded error event", async () => {
    const { sandbox, connection, headers } = sandboxFor("destroy-stream");
    const context = await sandbox.createCodeContext({ language: "python" });
    const answer = await fetch(`${connection.url}/v1/sandboxes/${connection.sandboxId}/code/run/stream`, {
      method: "POST",
      headers,
      body: JSON.stringify({ contextId: context.id, code: LONG_CELL }),
    });
    const events = readEventStream<CodeEvent | { type: "error"; code: string }>(answer.body!);
    expect((await events.next()).value?.type).toBe("start");
    await sandbox.destroy();
    const rest: unknown[] = [];
    for await (const event of events) rest.push(event);
    expect(rest.at(-1)).toMatchObject({ type: "error", code: "CONTAINER_UNAVAILABLE" });
  });
});
