/**
 * The exec-hook sandboxes by mode name: `edge` against the real stack over HTTP, and `direct` on
 * this machine, held to the same contract: bytes in and out unchanged, three distinguishable
 * failures, env as given, no shell, aborts, close, and a registry that refuses what it should.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  ExecHookError,
  ExecHookModeError,
  ExitError,
  lookupFactory,
  registeredModes,
  registerFactory,
  replaceFactory,
  TimeoutError,
  TransportError,
  type ExecHookSandbox,
} from "../../src/adapters/exec-hook/index.ts";
import { getHttpSandbox } from "../../src/client/index.ts";
import { httpConnection } from "./helpers.ts";

const edgeConnection = httpConnection("exec-hook");
const sandboxes: Record<string, ExecHookSandbox> = {
  edge: lookupFactory("edge")(edgeConnection),
  direct: lookupFactory("direct")(undefined),
};
afterAll(() => getHttpSandbox(edgeConnection.sandboxId, edgeConnection).destroy());

const allBytes = new Uint8Array(256).map((_, i) => i);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

// Every test is its own process: they run at once.
describe.concurrent.each(["edge", "direct"])("the %s sandbox", (mode) => {
  const sandbox = sandboxes[mode]!;

  it("is named by its mode", () => {
    expect(sandbox.name()).toBe(mode);
  });

  it("round-trips all 256 byte values through stdin and stdout", async () => {
    const response = await sandbox.spawn({ command: "cat", stdin: allBytes });
    expect(response.error).toBeUndefined();
    expect(response.stdout).toBeInstanceOf(Uint8Array);
    expect([...response.stdout]).toEqual([...allBytes]);
    expect(response.stderr.length).toBe(0);
  });

  it("carries a JSON payload in and a JSON answer out, a large one too", async () => {
    const payload = { event: "pre-commit", files: Array.from({ length: 20_000 }, (_, i) => `src/file-${i}.ts`), note: "żółw ✓" };
    const program = 'let s="";process.stdin.setEncoding("utf8");process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s);process.stdout.write(JSON.stringify({ok:true,count:p.files.length,note:p.note}))})';
    const response = await sandbox.spawn({ command: "node", args: ["-e", program], stdin: new TextEncoder().encode(JSON.stringify(payload)) });
    expect(response.error).toBeUndefined();
    expect(JSON.parse(text(response.stdout))).toEqual({ ok: true, count: 20_000, note: "żółw ✓" });
  });

  it("keeps stdout and stderr apart", async () => {
    const response = await sandbox.spawn({ command: "sh", args: ["-c", "printf out; printf err >&2"] });
    expect([text(response.stdout), text(response.stderr)]).toEqual(["out", "err"]);
  });

  it("fails with an ExitError carrying the exit code, and the output so far", async () => {
    const response = await sandbox.spawn({ command: "sh", args: ["-c", "echo partial; exit 3"] });
    expect(response.error).toBeInstanceOf(ExitError);
    expect(response.error).toBeInstanceOf(ExecHookError);
    expect(response.error).toMatchObject({ kind: "exit", exitCode: 3 });
    expect(text(response.stdout)).toBe("partial\n");
  });

  it("fails with a TimeoutError naming the deadline: a sleep longer than the test ends at 100 ms", async () => {
    const response = await sandbox.spawn({ command: "sleep", args: ["1000"], timeoutMs: 100 });
    expect(response.error).toBeInstanceOf(TimeoutError);
    expect(response.error).toMatchObject({ kind: "timeout", timeoutMs: 100, message: "timed out after 100 ms" });
  });

  it("fails with a TransportError when the command cannot run at all", async () => {
    const response = await sandbox.spawn({ command: "no-such-program-edge-sandbox" });
    expect(response.error).toBeInstanceOf(TransportError);
    expect(response.error?.kind).toBe("transport");
  });

  it("gives the process the env entries it was given, and runs args without a shell", async () => {
    process.env.EDGE_HOOK_SECRET = "caller-only";
    const response = await sandbox.spawn({
      command: "sh",
      args: ["-c", 'printf "%s|%s|%s|%s" "$ONE" "$TWO" "${EDGE_HOOK_SECRET:-absent}" "$1"', "sh", "$(id) `id` ;x"],
      env: ["ONE=1", "TWO=a=b"],
    });
    expect(text(response.stdout)).toBe("1|a=b|absent|$(id) `id` ;x");
    await expect(sandbox.spawn({ command: "true", env: ["NOEQUALS"] })).rejects.toThrow(TypeError);
  });

  it("kills the process and rejects with the reason when the signal aborts", async () => {
    const controller = new AbortController();
    const running = sandbox.spawn({ command: "sleep", args: ["30"] }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("hook cancelled")), 200);
    await expect(running).rejects.toThrow("hook cancelled");
  });
});

describe.concurrent("the edge sandbox's own cases", () => {
  it("uses its default timeout when a request gives 0 or less", async () => {
    const quick = lookupFactory("edge")({ ...edgeConnection, timeoutMs: 150 });
    const response = await quick.spawn({ command: "sleep", args: ["10"], timeoutMs: 0 });
    expect(response.error).toMatchObject({ kind: "timeout", timeoutMs: 150 });
  });

  it("is a TransportError, at once, when the service cannot be reached", async () => {
    const unreachable = lookupFactory("edge")({ url: "http://127.0.0.1:1", sandboxId: "nobody" });
    const response = await unreachable.spawn({ command: "true" });
    expect(response.error).toBeInstanceOf(TransportError);
    expect(response.error?.message).toMatch(/Cannot reach the sandbox service/);
  });

  it("kills what still runs on close, and refuses later spawns", async ({ expect }) => {
    // A sandbox of its own: the test counts what runs in it.
    const own = httpConnection("exec-hook-close");
    const closing = lookupFactory("edge")(own);
    const service = getHttpSandbox(own.sandboxId, own);
    const running = closing.spawn({ command: "sh", args: ["-c", "echo closing-test; sleep 30"] });
    await expect.poll(async () => (await service.listProcesses()).some((p) => p.command === "sh" && p.status === "running")).toBe(true);
    await closing.close!();
    const response = await running;
    expect(response.error).toBeInstanceOf(TransportError);
    expect((await closing.spawn({ command: "true" })).error).toBeInstanceOf(TransportError);
    await expect.poll(async () => (await service.listProcesses()).filter((p) => p.status === "running").length).toBe(0);
    await service.destroy();
  });

  it("does not keep the stdin buffer after the call", async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error("run with --expose-gc");
    const sandbox = sandboxes.edge!;
    const ref = await (async () => {
      const stdin = new Uint8Array(4 * 1024 * 1024).fill(7);
      const response = await sandbox.spawn({ command: "wc", args: ["-c"], stdin });
      expect(text(response.stdout).trim()).toBe(String(4 * 1024 * 1024));
      return new WeakRef(stdin);
    })();
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
    expect(ref.deref()).toBeUndefined();
  });
});

describe("the registry", () => {
  it("has direct and edge built in, and refuses a second factory for a mode", () => {
    expect(registeredModes()).toEqual(expect.arrayContaining(["direct", "edge"]));
    const error = (() => {
      try {
        registerFactory("edge", () => sandboxes.direct!);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ExecHookModeError);
    expect(error).toMatchObject({ code: "MODE_EXISTS", mode: "edge" });
  });

  it("adds and replaces modes", () => {
    const first = { name: () => "first", spawn: async () => ({ stdout: new Uint8Array(), stderr: new Uint8Array() }) };
    const second = { ...first, name: () => "second" };
    registerFactory("custom-test", () => first);
    expect(lookupFactory("custom-test")(undefined).name()).toBe("first");
    replaceFactory("custom-test", () => second);
    expect(lookupFactory("custom-test")(undefined).name()).toBe("second");
  });

  it("names the available modes when asked for an unknown one", () => {
    expect(() => lookupFactory("nope")).toThrow(/unknown exec hook mode "nope"; available modes: .*direct.*edge/);
    try {
      lookupFactory("nope");
    } catch (error) {
      expect(error).toMatchObject({ code: "UNKNOWN_MODE", available: expect.arrayContaining(["direct", "edge"]) });
    }
  });
});
