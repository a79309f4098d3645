/**
 * Sandbox lifecycle: isolation between sandboxes, container generations and stale handles, env
 * vars, sleeping after idle time (but not while a stream is open), and a missing runtime.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { ContainerUnavailableError, StaleProcessHandleError } from "../../src/client/index.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { RuntimeChannel } from "../../src/sandbox/runtime-channel.ts";
import { runtimeCall } from "../../src/sandbox/runtime-errors.ts";
import { apiCall, collect, eventually, runtimeFetch, runtimeState, sendToRuntime, uniqueId } from "./helpers.ts";

describe("isolation", () => {
  it("two sandboxes never see each other's files or processes", async () => {
    const a = getSandbox(env.Sandbox, uniqueId("iso-a"));
    const b = getSandbox(env.Sandbox, uniqueId("iso-b"));
    await a.exec("echo secret > mine.txt");
    await a.startProcess("sleep 30", { processId: "shared-name" });
    expect((await b.exec("cat mine.txt")).exitCode).not.toBe(0);
    expect((await b.exec("ls")).stdout).toBe("");
    expect(await b.listProcesses()).toEqual([]);
    expect(await b.getProcess("shared-name")).toBeNull();
    // The same process id in b is a different process.
    const other = await b.startProcess("echo from b", { processId: "shared-name" });
    await other.waitForExit(10_000);
    expect((await a.getProcess("shared-name"))?.status).toBe("running");
    const [wa, wb] = await Promise.all([a.exec("pwd"), b.exec("pwd")]);
    expect(wa.stdout).not.toBe(wb.stdout);
    await a.killAllProcesses();
  });
});

describe("generations", () => {
  it("a handle from before a container restart is stale and never touches the new process", async () => {
    const sandbox = getSandbox(env.Sandbox, uniqueId("stale"));
    const old = await sandbox.startProcess("sleep 30", { processId: "srv" });
    const before = await sandbox.info();
    expect(before.generation).toBe(old.generation);

    await sandbox.destroy();
    const fresh = await sandbox.startProcess("sleep 30", { processId: "srv" });
    const after = await sandbox.info();
    expect(after.generation).not.toBe(before.generation);
    expect(after.generationNumber).toBe(before.generationNumber + 1);
    expect(fresh.generation).toBe(after.generation);

    await expect(old.getStatus()).rejects.toBeInstanceOf(StaleProcessHandleError);
    await expect(old.kill("SIGKILL")).rejects.toMatchObject({ code: "STALE_PROCESS_HANDLE", httpStatus: 410 });
    await expect(old.getLogs()).rejects.toBeInstanceOf(StaleProcessHandleError);
    await expect(old.sendStdin("x")).rejects.toBeInstanceOf(StaleProcessHandleError);
    await expect(old.waitForExit(1_000)).rejects.toBeInstanceOf(StaleProcessHandleError);
    // The new process with the same id was not touched.
    expect(await fresh.getStatus()).toBe("running");
    expect((await sandbox.getProcess("srv"))?.generation).toBe(after.generation);
    await fresh.kill("SIGKILL");
  });

  it("notices a container that died behind its back and starts a new one", async () => {
    const id = uniqueId("crash");
    const sandbox = getSandbox(env.Sandbox, id);
    const handle = await sandbox.startProcess("sleep 30");
    const { generationNumber } = await sandbox.info();
    // Kill the container server directly at the runtime, as a crash would.
    await runtimeFetch(`/containers/${id}`, { method: "DELETE" });
    expect(await eventually(async () => (await sandbox.exec("echo back")).stdout === "back\n", 15_000, 200)).toBe(true);
    expect((await sandbox.info()).generationNumber).toBe(generationNumber + 1);
    await expect(handle.getStatus()).rejects.toBeInstanceOf(StaleProcessHandleError);
  });

  it("a run named by an idempotency key is not run again by the next container: the retry is told it is gone", async () => {
    const id = uniqueId("keyed-crash");
    const sandbox = getSandbox(env.Sandbox, id);
    // The workspace outlives the container: each run leaves a line there.
    const marked = (name: string) => `echo run >> ${name}; echo ran`;
    expect((await sandbox.exec(marked("exec-ran"), { idempotencyKey: "exec-k" })).stdout).toBe("ran\n");
    const started = await sandbox.startProcess(`${marked("start-ran")}; sleep 30`, { idempotencyKey: "start-k" });
    // Within one container a retry attaches (no second run).
    expect((await sandbox.startProcess(`${marked("start-ran")}; sleep 30`, { idempotencyKey: "start-k" })).id).toBe(started.id);
    const { generationNumber } = await sandbox.info();

    await runtimeFetch(`/containers/${id}`, { method: "DELETE" });
    expect(await eventually(async () => (await sandbox.exec("echo back")).stdout === "back\n", 15_000, 200)).toBe(true);
    expect((await sandbox.info()).generationNumber).toBe(generationNumber + 1);

    const gone = { code: "IDEMPOTENT_RUN_GONE", httpStatus: 410, context: { generation: generationNumber } };
    await expect(sandbox.exec(marked("exec-ran"), { idempotencyKey: "exec-k" })).rejects.toMatchObject({ ...gone, context: { ...gone.context, idempotencyKey: "exec-k" } });
    await expect(sandbox.startProcess(`${marked("start-ran")}; sleep 30`, { idempotencyKey: "start-k" })).rejects.toMatchObject(gone);
    await expect(collect(await sandbox.execStream(marked("exec-ran"), { idempotencyKey: "exec-k" }))).rejects.toMatchObject(gone);
    // Nothing ran in the new container; a new key runs as usual.
    expect((await sandbox.exec("cat exec-ran start-ran")).stdout).toBe("run\nrun\n");
    expect((await sandbox.exec(marked("fresh-ran"), { idempotencyKey: "fresh-k" })).stdout).toBe("ran\n");
  });

  it("destroying a sandbox forgets its keys: the same key runs in the new sandbox", async () => {
    const sandbox = getSandbox(env.Sandbox, uniqueId("keyed-destroy"));
    expect((await sandbox.exec("echo first", { idempotencyKey: "k" })).stdout).toBe("first\n");
    await sandbox.destroy();
    expect((await sandbox.exec("echo first", { idempotencyKey: "k" })).stdout).toBe("first\n");
    expect((await sandbox.info()).generationNumber).toBeGreaterThan(1);
  });
});

describe("configuration", () => {
  it("gives commands the sandbox env vars, and applies changes", async () => {
    const id = uniqueId("envvars");
    const sandbox = getSandbox(env.Sandbox, id, { envVars: { GREETING: "hello", DROPPED: "yes" } });
    expect((await sandbox.exec('echo "$GREETING $DROPPED"')).stdout).toBe("hello yes\n");
    expect((await sandbox.exec('echo "$GREETING"', { env: { GREETING: "per call" } })).stdout).toBe("per call\n");
    await sandbox.configure({ envVars: { GREETING: "changed" } });
    expect((await sandbox.exec('echo "$GREETING-${DROPPED:-unset}"')).stdout).toBe("changed-unset\n");
    // Kept across container restarts.
    await sandbox.destroy();
    expect((await getSandbox(env.Sandbox, id).exec('echo "$GREETING"')).stdout).toBe("changed\n");
  });

  it("rejects a malformed sleepAfter", async () => {
    await expect(getSandbox(env.Sandbox, uniqueId("cfg")).configure({ sleepAfter: "soon" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("sleep", () => {
  it("sleeps after sleepAfter idle time, but not while a stream is open", async () => {
    const id = uniqueId("sleepy");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    // A process that does not keep the sandbox awake by itself (keep-alive.test.ts covers those that do).
    const process = await sandbox.startProcess("while true; do echo tick; sleep 0.3; done", { keepAlive: false });
    const running = async () => (await runtimeState(id)).running;
    // Follow the log for three times sleepAfter: the open stream keeps the container up.
    await expect(collect(process.streamLogs({ signal: AbortSignal.timeout(3_000) }))).rejects.toMatchObject({ name: "TimeoutError" });
    expect(await running()).toBe(true);
    // Stream closed: now it goes to sleep.
    expect(await eventually(async () => !(await running()), 15_000, 200)).toBe(true);
    // And wakes up on the next call, as a new generation: the old handle reads what was kept of its
    // process (killed with its container), and cannot act on it.
    expect((await sandbox.exec("echo awake")).stdout).toBe("awake\n");
    expect(await process.getStatus()).toBe("killed");
    await expect(process.kill()).rejects.toBeInstanceOf(StaleProcessHandleError);
    await sandbox.destroy();
  });
});

describe("a call in flight", () => {
  it("keeps the container awake past sleepAfter: a buffered command longer than it ends with its result", async () => {
    const id = uniqueId("in-flight");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    const before = await sandbox.exec("cat /proc/sys/kernel/random/boot_id && echo started");
    // Three times sleepAfter with no stream open: only the call itself says the sandbox is in use.
    const result = await sandbox.exec("sleep 3; echo done");
    expect(result).toMatchObject({ success: true, stdout: "done\n" });
    expect(before.success).toBe(true);
    await sandbox.destroy();
  });
});

/**
 * workerd asks the engine about a Durable Object's container as it makes the object: an object made
 * while no engine answers fails there, before any code of ours runs. These objects are made first;
 * then their runtime (its engine and its API) goes, as when it is stopped.
 */
describe("when the runtime is gone", () => {
  async function runtimeGone(label: string, running: boolean): Promise<string> {
    const id = uniqueId(label);
    if (running) expect((await getSandbox(env.Sandbox, id).exec("echo up")).stdout).toBe("up\n");
    else expect(await getSandbox(env.Sandbox, id).status()).toMatchObject({ running: false });
    await sendToRuntime(id, "none");
    return id;
  }

  it("fails within seconds with CONTAINER_UNAVAILABLE naming what to start", async () => {
    const id = await runtimeGone("no-runtime", false);
    const started = Date.now();
    const error = await getSandbox(env.Sandbox, id).exec("echo hi").catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(ContainerUnavailableError);
    expect((error as Error).message).toContain("npm start");
    expect((error as Error).message).toContain("not reachable");
  });

  it("reports a destroy of a running container that cannot reach the engine, over RPC and HTTP, instead of claiming success", async () => {
    const id = await runtimeGone("no-runtime-delete", true);
    const error = await getSandbox(env.Sandbox, id).destroy().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContainerUnavailableError);
    expect((error as Error).message).toContain("could not be destroyed");
    const response = await apiCall(`/v1/sandboxes/${id}`, { method: "DELETE" });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ success: false, code: "CONTAINER_UNAVAILABLE", httpStatus: 503 });
  });
});

describe("with a runtime that does not know the Worker's secret", () => {
  it("fails with CONTAINER_UNAVAILABLE naming SANDBOX_RUNTIME_SECRET, not the caller's 401", async () => {
    const id = uniqueId("wrong-secret");
    // The Durable Object's channel to the runtime, as it builds it, with a secret the runtime does not know.
    const stranger = new RuntimeChannel(inject("runtimeUrl"), id, "not-the-runtime-secret");
    const calls: (() => Promise<unknown>)[] = [() => stranger.state(), () => stranger.detectIsolation(), () => stranger.checkIsolation({ isolation: "none" })];
    for (const call of calls) {
      const error = await runtimeCall(call).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ContainerUnavailableError);
      expect(error).toMatchObject({ code: "CONTAINER_UNAVAILABLE", httpStatus: 503 });
      expect((error as Error).message).toContain("SANDBOX_RUNTIME_SECRET");
    }
  });
});
