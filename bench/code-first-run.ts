/**
 * The first code run of a sandbox, without a context: it takes the default Python context the
 * container server warmed when it started, so it should cost about what a warm run costs, far less
 * than spawning a Python. Measured at the container server (a fresh server per sample, with and
 * without warm contexts) and through the whole chain (a fresh sandbox per sample), each beside
 * `python3 -c` spawned by the same server in the same run, and beside the second run.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { SERVER_ASSETS } from "../container/server-assets.ts";
import type { Execution } from "../protocol/code.ts";
import { CODE_ROUTES } from "../protocol/code.ts";
import { EXEC_ROUTES } from "../protocol/process.ts";
import { descendantsOf } from "../runtime/process-tree.ts";
import { send, startStack } from "./chain-stack.ts";
import { median, ms, nowMs, postJson, startServerProcess } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const SERVER_SAMPLES = 10;
const CHAIN_SAMPLES = 8;
const PYTHON = "/usr/bin/python3";
const SPAWN = `${PYTHON} -c "print(1+1)"`;
/** After the warm interpreter's process appears, what its driver takes to import and say ready, with room to spare. */
const SETTLE_MS = 600;
/** A sandbox's warm contexts start with its container server; this covers it on a loaded two-core machine. */
const CHAIN_SETTLE_MS = 2000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function timed(work: () => Promise<void>): Promise<number> {
  const t0 = nowMs();
  await work();
  return nowMs() - t0;
}

function checkTwo(execution: Execution): void {
  if (execution.error || execution.results[0]?.text !== "2") throw new Error(`unexpected run: ${JSON.stringify(execution).slice(0, 300)}`);
}

/** Waits until a Python interpreter runs under the server (its warm context), then lets it settle. */
async function warmPython(serverPid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const python = descendantsOf(serverPid).some((pid) => {
      try {
        const [program, driver] = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return program === PYTHON && basename(driver ?? "") === basename(SERVER_ASSETS.pythonDriver);
      } catch {
        return false;
      }
    });
    if (python) {
      await pause(SETTLE_MS);
      return;
    }
    await pause(20);
  }
  throw new Error("no warm Python context appeared");
}

interface FirstRuns {
  first: number[];
  second: number[];
  spawn: number[];
}

async function serverFirstRuns(warm: boolean): Promise<FirstRuns> {
  const runs: FirstRuns = { first: [], second: [], spawn: [] };
  for (let i = 0; i < SERVER_SAMPLES; i++) {
    const server = await startServerProcess(warm ? {} : { SANDBOX_WARM_CODE: "none" });
    try {
      if (warm) await warmPython(server.pid);
      else await pause(SETTLE_MS);
      const runCode = async () => checkTwo(await postJson<Execution>(server.url, CODE_ROUTES.run, { code: "1+1" }));
      runs.first.push(await timed(runCode));
      runs.second.push(await timed(runCode));
      runs.spawn.push(
        await timed(async () => {
          const result = await postJson<{ stdout: string }>(server.url, EXEC_ROUTES.execute, { command: SPAWN });
          if (result.stdout !== "2\n") throw new Error(`unexpected exec: ${JSON.stringify(result)}`);
        }),
      );
    } finally {
      await server.close();
    }
  }
  return runs;
}

async function serverTable(): Promise<BenchTable> {
  const warm = await serverFirstRuns(true);
  const cold = await serverFirstRuns(false);
  const spawn = median([...warm.spawn, ...cold.spawn]);
  const first = median(warm.first);
  return {
    title: `First code run without a context at the container server (median of ${SERVER_SAMPLES} fresh servers each)`,
    baselineLabel: `exec \`${SPAWN}\`, same servers, same run`,
    rows: [
      { metric: "first `runCode(\"1+1\")`, default context warm", ours: ms(first), baseline: ms(spawn), target: "faster than the spawn", met: first < spawn },
      { metric: "second run (the same context)", ours: ms(median(warm.second)), baseline: ms(spawn) },
      { metric: "first run with warm contexts off (`SANDBOX_WARM_CODE=none`: the interpreter starts for it)", ours: ms(median(cold.first)), baseline: ms(spawn) },
    ],
    notes: [`Each server is started, its warm Python waited for (${SETTLE_MS} ms after its process appears), then asked for its first run.`],
  };
}

async function chainTable(): Promise<BenchTable> {
  const stack = await startStack();
  const auth = { authorization: `Bearer ${stack.token}` };
  const first: number[] = [];
  const second: number[] = [];
  const spawned: number[] = [];
  try {
    for (let i = 0; i < CHAIN_SAMPLES; i++) {
      const sandbox = `${stack.url}/v1/sandboxes/bench-first-run-${i}`;
      const started = await send(`${sandbox}/exec`, "POST", { command: "true" }, auth);
      if (started.status !== 200) throw new Error(`sandbox did not start: ${started.status} ${started.body}`);
      await pause(CHAIN_SETTLE_MS);
      const runCode = async () => {
        const reply = await send(`${sandbox}/code/run`, "POST", { code: "1+1" }, auth);
        checkTwo(JSON.parse(reply.body) as Execution);
      };
      first.push(await timed(runCode));
      second.push(await timed(runCode));
      spawned.push(
        await timed(async () => {
          const reply = await send(`${sandbox}/exec`, "POST", { command: SPAWN }, auth);
          if ((JSON.parse(reply.body) as { stdout: string }).stdout !== "2\n") throw new Error(`unexpected exec: ${reply.body}`);
        }),
      );
      await send(sandbox, "DELETE", undefined, auth);
    }
  } finally {
    await stack.close();
  }
  const spawn = median(spawned);
  const firstRun = median(first);
  return {
    title: `First code run without a context through the chain (median of ${CHAIN_SAMPLES} fresh sandboxes, /v1 over wrangler dev)`,
    baselineLabel: `exec \`${SPAWN}\` through the same chain, same sandboxes`,
    rows: [
      { metric: "first `runCode(\"1+1\")`, default context warm", ours: ms(firstRun), baseline: ms(spawn), target: "faster than the spawn", met: firstRun < spawn },
      { metric: "second run", ours: ms(median(second)), baseline: ms(spawn) },
    ],
    notes: [`Each sandbox is started by a first command (\`true\`), given ${CHAIN_SETTLE_MS} ms, then asked for its first run.`],
  };
}

const bench: BenchModule = {
  name: "code-first-run",
  async run() {
    return [await serverTable(), await chainTable()];
  },
};

export default bench;
