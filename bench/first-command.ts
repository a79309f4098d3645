/**
 * Time to first command through the whole local chain, measured as the public sandbox leaderboard
 * measures a provider: create a sandbox, run `node -v` in it, stop the clock. Sequential creations
 * (median, p95, p99), then a burst of concurrent ones on top of them (still live, idle), each on
 * `npm start`'s stack (wrangler dev → Worker → Durable Object → local runtime → a container server per
 * sandbox): once without a warm pool, once with one, in the same run. Also the resident memory of an
 * idle sandbox's server, the part of it that is its own (USS: its private pages; a server's resident
 * figure counts the Node binary's pages, which every server shares through the page cache) and its
 * proportional share (PSS).
 *
 * The runtime's engine trace is on (SANDBOX_ENGINE_TRACE=1): each sequential first command is cut
 * where workerd calls the engine (engine-trace.ts), and the engine's answers to workerd's calls are
 * given, median. Both phases pay the trace's one stderr line per call alike.
 */
import { readFileSync, readlinkSync } from "node:fs";
import type { RuntimeHealth } from "../protocol/runtime.ts";
import { MIN_QUIET_MS } from "../runtime/idle.ts";
import { WARM_CPU_WEIGHT } from "../runtime/pool.ts";
import { descendantsOf } from "../runtime/process-tree.ts";
import { percentile, send, startStack, type Stack } from "./chain-stack.ts";
import { ENGINE_TRACE_VAR, isHeldCall, splitFirstCommand, tracedCalls, type FirstCommandSplit } from "./engine-trace.ts";
import { privateAndProportional } from "./idle-server-memory.ts";
import { median, mib } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

/** The leaderboard runs 100; 30 keeps the benchmark short and still gives a p95 (p99 is the slowest). */
const SEQUENTIAL = 30;
const BURST = 20;
/** Warm servers of the pooled stack: one per sandbox of the burst, so the burst can start all warm. */
const WARM_POOL = BURST;
/** What an idle sandbox's server may hold of its own. */
const IDLE_PRIVATE_AIM = 12 * 1024 * 1024;

const ms = (value: number) => `${value.toFixed(0)} ms`;

interface Measured {
  sequential: number[];
  burst: number[];
  burstWall: number;
  /** RSS of each idle sandbox's server after the sequential run. */
  idleRss: number[];
  /** Its private part (USS): what each server adds beside the Node binary's pages, which all share. */
  idlePrivate: number[];
  /** Its proportional set size: its private pages and its share of those it shares. */
  idlePss: number[];
  /** Each sequential first command cut where workerd calls the engine. */
  splits: FirstCommandSplit[];
  /** The engine's answers to workerd's calls that answer at once (not start, not wait), ms, in the sequential phase. */
  engineAnswers: number[];
  /** The sidecars' answers to workerd's control requests (PUT /egress, GET /ca), ms. */
  sidecarAnswers: number[];
}

/** A figure of /proc/<pid>/status, in bytes. */
function statusBytes(pid: number, field: "VmRSS"): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  return kb * 1024;
}

/** Container servers of the stack that serve a sandbox (their folder is a sandbox's workspace). */
function sandboxServers(stack: Stack): number[] {
  return descendantsOf(stack.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("container/main.") && readlinkSync(`/proc/${pid}/cwd`).endsWith("/workspace");
    } catch {
      return false; // gone meanwhile
    }
  });
}

async function health(stack: Stack): Promise<RuntimeHealth> {
  return JSON.parse((await send(`${stack.runtimeUrl}/health`, "GET", undefined, { authorization: `Bearer ${stack.runtimeSecret}` })).body) as RuntimeHealth;
}

/** Waits (up to 60 s) until the runtime's warm pool is full again, so each phase starts from a full pool. */
async function poolFilled(stack: Stack): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const state = await health(stack);
    if (state.warmServers >= state.warmPoolSize || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function measure(warmPool: number): Promise<Measured> {
  const trace: string[] = [];
  const stack = await startStack({ SANDBOX_WARM_POOL: String(warmPool), [ENGINE_TRACE_VAR]: "1" }, (line) => {
    if (line.startsWith("engine-trace ")) trace.push(line);
  });
  const windows: { start: number; end: number }[] = [];
  const epochMs = () => performance.timeOrigin + performance.now();
  const auth = { authorization: `Bearer ${stack.token}` };
  const run = Math.random().toString(36).slice(2, 8);
  let counter = 0;
  const created: string[] = [];
  const firstCommand = async (): Promise<number> => {
    const id = `ttfc-${run}-${++counter}`;
    const start = performance.now();
    const reply = await send(`${stack.url}/v1/sandboxes/${id}/exec`, "POST", { command: "node -v" }, auth);
    const elapsed = performance.now() - start;
    created.push(id);
    const result = JSON.parse(reply.body) as { exitCode?: number; stdout?: string };
    if (reply.status !== 200 || result.exitCode !== 0 || !result.stdout?.startsWith("v")) throw new Error(`node -v: ${reply.status} ${reply.body}`);
    return elapsed;
  };
  try {
    await firstCommand(); // the stack's first request pays for warming up wrangler
    const idleBefore = new Set(sandboxServers(stack));
    await poolFilled(stack);
    const sequential: number[] = [];
    trace.length = 0;
    for (let i = 0; i < SEQUENTIAL; i++) {
      const start = epochMs();
      sequential.push(await firstCommand());
      windows.push({ start, end: epochMs() });
    }
    const sequentialEnd = Date.now();
    const calls = tracedCalls(trace);
    const splits = windows.flatMap(({ start, end }) => splitFirstCommand(calls, start, end) ?? []);
    const engineAnswers = calls.filter((call) => call.by === "engine" && !isHeldCall(call)).map((call) => call.answered - call.arrived);
    const sidecarAnswers = calls.filter((call) => call.by === "sidecar").map((call) => call.answered - call.arrived);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // idle: no command since its first
    const idle = sandboxServers(stack).filter((pid) => !idleBefore.has(pid));
    const idleRss = idle.map((pid) => statusBytes(pid, "VmRSS"));
    const idleShares = idle.map(privateAndProportional);
    const idlePrivate = idleShares.map((share) => share.uss);
    const idlePss = idleShares.map((share) => share.pss);
    // The burst comes on top of the sequential sandboxes, still live: at the runtime's cap, idle ones
    // sleep to make room, so each must have been quiet long enough to count as idle.
    await poolFilled(stack);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, sequentialEnd + MIN_QUIET_MS + 500 - Date.now())));
    const start = performance.now();
    const burst = await Promise.all(Array.from({ length: BURST }, () => firstCommand()));
    const burstWall = performance.now() - start;
    return { sequential: sequential.sort((a, b) => a - b), burst: burst.sort((a, b) => a - b), burstWall, idleRss, idlePrivate, idlePss, splits, engineAnswers, sidecarAnswers };
  } finally {
    await Promise.all(created.map((id) => send(`${stack.url}/v1/sandboxes/${id}`, "DELETE", undefined, auth).catch(() => undefined)));
    await stack.close();
  }
}

const bench: BenchModule = {
  name: "first-command",
  async run(): Promise<BenchTable[]> {
    const cold = await measure(0);
    const warm = await measure(WARM_POOL);
    const row = (metric: string, pick: (m: Measured) => number, aim?: { text: string; max: number }) => ({
      metric,
      ours: ms(pick(warm)),
      baseline: ms(pick(cold)),
      ...(aim ? { target: aim.text, met: pick(warm) <= aim.max } : {}),
    });
    const split = (m: Measured, pick: (one: FirstCommandSplit) => number) => median(m.splits.map(pick));
    const splitRow = (metric: string, pick: (one: FirstCommandSplit) => number) => ({ metric, ours: ms(split(warm, pick)), baseline: ms(split(cold, pick)) });
    const fine = (value: number) => `${value.toFixed(2)} ms`;
    return [
      {
        title: `Time to first command: new sandbox → \`node -v\` through the local chain (${SEQUENTIAL} one after another, then a burst of ${BURST})`,
        baselineLabel: "no warm pool, same run",
        rows: [
          row("sequential, median", (m) => percentile(m.sequential, 50), { text: "≤ 60 ms", max: 60 }),
          row("sequential, p95", (m) => percentile(m.sequential, 95)),
          row(`sequential, p99 (of ${SEQUENTIAL}: the slowest)`, (m) => percentile(m.sequential, 99)),
          row(`burst of ${BURST} on top of the ${SEQUENTIAL + 1} live: median per sandbox`, (m) => percentile(m.burst, 50), { text: "≤ 500 ms", max: 500 }),
          row(`burst of ${BURST}: p95 per sandbox`, (m) => percentile(m.burst, 95)),
          row(`burst of ${BURST}: all done (wall)`, (m) => m.burstWall),
          {
            metric: "idle sandbox server, resident memory (median)",
            ours: `${mib(median(warm.idleRss))} (${warm.idleRss.length} servers)`,
            baseline: `${mib(median(cold.idleRss))} (${cold.idleRss.length} servers)`,
          },
          {
            metric: "… of it private to each server (USS: Private_Clean + Private_Dirty of smaps_rollup; the rest is mostly the Node binary's, shared by every server)",
            ours: mib(median(warm.idlePrivate)),
            baseline: mib(median(cold.idlePrivate)),
            target: `≤ ${mib(IDLE_PRIVATE_AIM)}`,
            met: median(warm.idlePrivate) <= IDLE_PRIVATE_AIM,
          },
          {
            metric: "… its proportional share (PSS: its private pages and its share of the shared ones)",
            ours: mib(median(warm.idlePss)),
            baseline: mib(median(cold.idlePss)),
          },
        ],
        notes: [
          `ours: the runtime keeps ${WARM_POOL} booted container servers (SANDBOX_WARM_POOL=${WARM_POOL}; the default is 2), and each phase starts from a full pool. ` +
            "Every request: POST /v1/sandboxes/:id/exec with a new id, through wrangler dev → Worker → Durable Object → local runtime. " +
            `The leaderboard runs 100 sequential creations; this runs ${SEQUENTIAL} to stay short, so its p99 is the slowest of them.`,
          `The pool replaces a server it handed out in the background; a warm container boots and waits with cpu.weight ${WARM_CPU_WEIGHT} (a sandbox's: 100), ` +
            "a warm server outside containers (as here: SANDBOX_ISOLATION=none) with its session's least share (runtime/warm-share.ts), " +
            "so its boot takes only the CPU the sandboxes starting leave.",
        ],
      },
      {
        title: `A new sandbox's first command, cut where workerd calls the runtime's Docker engine (the ${SEQUENTIAL} sequential ones, median)`,
        baselineLabel: "no warm pool, same run",
        rows: [
          {
            metric: "the engine's answer to workerd's calls (all but start and wait, which hold until the container is up or ends)",
            ours: `${fine(median(warm.engineAnswers))} (${warm.engineAnswers.length} calls)`,
            baseline: `${fine(median(cold.engineAnswers))} (${cold.engineAnswers.length} calls)`,
            target: "≤ 2 ms",
            met: median(warm.engineAnswers) <= 2,
          },
          {
            metric: "the sidecar's answer to workerd's control requests (PUT /egress, GET /ca)",
            ours: `${fine(median(warm.sidecarAnswers))} (${warm.sidecarAnswers.length} requests)`,
            baseline: `${fine(median(cold.sidecarAnswers))} (${cold.sidecarAnswers.length} requests)`,
          },
          { metric: "calls workerd makes for a new sandbox, up to its start", ours: String(split(warm, (one) => one.calls)), baseline: String(split(cold, (one) => one.calls)) },
          splitRow("request sent → workerd's first call (wrangler, the Worker, the Durable Object)", (one) => one.beforeEngine),
          splitRow("workerd's first call → the container's start answered (sidecar, create, start)", (one) => one.workerdStart),
          splitRow("… of it the engine's start itself (a warm server handed its sandbox, or one booted)", (one) => one.engineStart),
          splitRow("start answered → the command's answer (readiness probes through the sidecar, the command)", (one) => one.afterStart),
        ],
        notes: [`Cut by the engine trace's arrival and answer times against the benchmark's own clock; ${warm.splits.length} and ${cold.splits.length} of ${SEQUENTIAL} sandboxes were cut (a window without its start is left out).`],
      },
    ];
  },
};

export default bench;
