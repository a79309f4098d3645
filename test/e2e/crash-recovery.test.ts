/**
 * `npm start` keeps serving through crashes: workerd killed outright (wrangler restarts it, but its
 * dev proxy can then hold every request for good), and the Worker's whole process killed. Each time
 * the service must answer again within a bound and say what recovered. A stack of its own: these
 * tests kill parts of it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../runtime/ports.ts";
import { descendantsOf } from "../../runtime/process-tree.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const token = `crash-token-${Math.random().toString(36).slice(2)}`;
/** How soon the service must answer again after a crash (detection ≤ 1 s, 5 s for wrangler's own restart, a new Worker). */
const RECOVERY_BOUND_MS = 40_000;

let stack: ChildProcess;
let url: string;
let output = "";
let dataDir: string;

/** Resolves once `predicate` holds for the stack's output; rejects at the deadline or if the stack exits. */
function outputSays(predicate: (text: string) => boolean, withinMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`not said within ${withinMs} ms:\n${output}`)), withinMs);
    const check = () => predicate(output) && done();
    const exited = (code: number | null) => done(new Error(`npm start exited (${code}):\n${output}`));
    function done(error?: Error) {
      clearTimeout(timer);
      stack.stdout!.off("data", check);
      stack.stderr!.off("data", check);
      stack.off("exit", exited);
      if (error) reject(error);
      else resolve();
    }
    stack.stdout!.on("data", check);
    stack.stderr!.on("data", check);
    stack.once("exit", exited);
    check();
  });
}

function processesNamed(name: string): number[] {
  return descendantsOf(stack.pid!).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === name;
    } catch {
      return false;
    }
  });
}

function workerProcess(): number {
  const [pid] = descendantsOf(stack.pid!).filter((candidate) => {
    try {
      return readFileSync(`/proc/${candidate}/cmdline`, "utf8").includes("worker-dev.ts");
    } catch {
      return false;
    }
  });
  if (pid === undefined) throw new Error("no Worker process under npm start");
  return pid;
}

/** Polls the Worker's health until it answers; resolves with how long that took, or rejects at the bound. */
async function answersAgain(since: number): Promise<number> {
  while (Date.now() - since < RECOVERY_BOUND_MS) {
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).ok) return Date.now() - since;
    } catch {
      // not yet
    }
    if (stack.exitCode !== null) throw new Error(`npm start exited (${stack.exitCode}):\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no answer within ${RECOVERY_BOUND_MS} ms:\n${output}`);
}

async function exec(command: string): Promise<string> {
  const response = await fetch(`${url}/v1/sandboxes/crash/exec`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ command }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { stdout?: string };
  expect(response.status).toBe(200);
  return body.stdout ?? "";
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sandbox-crash-"));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  stack = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      SANDBOX_API_TOKEN: token,
      SANDBOX_DATA_DIR: join(dataDir, "sandboxes"),
      WRANGLER_PERSIST_TO: join(dataDir, "state"),
      SANDBOX_ISOLATION: "none",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stack.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  stack.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await outputSays((text) => text.includes("Sandbox service ready"), 100_000);
}, 120_000);

afterAll(async () => {
  if (stack && stack.exitCode === null) {
    const exited = new Promise((resolve) => stack.once("exit", resolve));
    stack.kill("SIGINT");
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

describe("npm start under crashes", () => {
  it("answers again after workerd is killed outright, and says what recovered", async () => {
    expect(await exec("echo before")).toBe("before\n");
    const workerd = processesNamed("workerd");
    expect(workerd.length).toBeGreaterThanOrEqual(1);
    const killedAt = Date.now();
    for (const pid of workerd) process.kill(pid, "SIGKILL");
    const took = await answersAgain(killedAt);
    expect(took).toBeLessThan(RECOVERY_BOUND_MS);
    await outputSays((text) => /health: workerd \(pid [\d, ]+\) died.*\n[\s\S]*health: (the Worker recovered|.*answers again)/.test(text), RECOVERY_BOUND_MS);
    // The whole chain works again: Worker, Durable Object, container server.
    expect(await exec("echo after")).toBe("after\n");
    expect(stack.exitCode).toBeNull();
  }, 90_000);

  it("answers again after the Worker's whole process is killed", async () => {
    const killedAt = Date.now();
    process.kill(workerProcess(), "SIGKILL");
    await answersAgain(killedAt);
    await outputSays((text) => /health: the Worker's process exited \(SIGKILL\)[\s\S]*health: the Worker recovered/.test(text), RECOVERY_BOUND_MS);
    expect(await exec("echo again")).toBe("again\n");
    expect(stack.exitCode).toBeNull();
  }, 90_000);
});

describe("npm start when a container server dies", () => {
  it("says so, and the sandbox's next call gets a new one", async () => {
    expect(await exec("echo first")).toBe("first\n");
    // Read through the service's root: sandboxes' disks are mounted in its own mount namespace.
    const pid = Number(readFileSync(join(`/proc/${stack.pid}/root`, dataDir, "sandboxes", "crash", "container.pid"), "utf8").split("\n")[0]);
    process.kill(pid, "SIGKILL");
    await outputSays((text) => text.includes("health: sandbox crash's container server died (SIGKILL) without being asked to stop"), 10_000);
    expect(await exec("echo second")).toBe("second\n");
    await outputSays((text) => text.includes("health: sandbox crash's container server is back"), 10_000);
  }, 60_000);
});
