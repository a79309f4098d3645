/**
 * An idle container server's own memory beside a bare Node HTTP server's, each started alone as the
 * image starts it (the bundle's startup snapshot on the image's environment, the server's Node flags,
 * no warm code contexts, no bubblewrap), and the bundle's main.js started without the snapshot (as the
 * local runtime starts it), read a few seconds after it listens: its private pages (USS:
 * `Private_Clean` + `Private_Dirty` of smaps_rollup), which is what each more sandbox costs the
 * machine, and its proportional share (PSS), which adds its part of the pages every server shares
 * (the Node binary's). Starts alternate between the two and the median of each is reported. Each is
 * read twice: soon after its start, and once V8's memory reducer has collected what the start left,
 * which is what a sandbox left idle holds. A start runs only young-generation collections; the
 * reducer first looks ~10 s after it, still counts the start's allocations (nothing since) and waits
 * 8 s more, so its collections come ~17 and ~26 s after the start (later on a busy machine).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleServer } from "../container/boot/bundle.ts";
import { IMAGE_ENV_VAR } from "../protocol/runtime.ts";
import { BUNDLE_ENTRY, BUNDLE_SNAPSHOT } from "../server-kit/bundle-layout.ts";
import { SERVER_NODE_FLAGS } from "../server-kit/node-flags.ts";
import { median, mib } from "./support.ts";
import type { BenchTable } from "./types.ts";

const ROUNDS = 3;
/** How long after listening the figures are read: the server's start has settled by then. */
const SETTLE_MS = 4000;
/** When it is read again: V8's memory reducer has run by then. */
const REDUCED_MS = 45_000;
const USS_AIM = 12 * 1024 * 1024;

/** The baseline: a Node HTTP server and nothing else, saying where it listens as the server does. */
const BARE_SERVER = `const s = require("node:http").createServer((req, res) => res.end()); s.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + s.address().port));`;

/** Figures of /proc/<pid>/smaps_rollup, in bytes: USS (private pages, clean and dirty) and PSS. */
export function privateAndProportional(pid: number): { uss: number; pss: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) * 1024;
  return { uss: kb("Private_Clean") + kb("Private_Dirty"), pss: kb("Pss") };
}

interface Figures {
  uss: number;
  pss: number;
}

/** Starts `node <args>`, waits until it says it listens, reads its figures SETTLE_MS and REDUCED_MS after that, stops it. */
export async function idleFigures(args: string[], env: Record<string, string>): Promise<{ soon: Figures; reduced: Figures }> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "inherit"] });
  try {
    await new Promise<void>((resolve, reject) => {
      let text = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes("listening on")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`exited early (${code})`)));
    });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const soon = privateAndProportional(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, REDUCED_MS - SETTLE_MS));
    return { soon, reduced: privateAndProportional(child.pid!) };
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

/**
 * The Node arguments of the image's start script (container/boot/start-script.ts): the server from the
 * bundle's snapshot, main.js naming its folder; `extra` (a preload) goes before main.js.
 */
export function imageServerArgs(bundle: string, extra: readonly string[] = []): string[] {
  return [...SERVER_NODE_FLAGS, "--snapshot-blob", join(bundle, BUNDLE_SNAPSHOT), ...extra, join(bundle, BUNDLE_ENTRY)];
}

/**
 * The environment of a container server started alone as the image starts it, in `work`: no warm
 * code contexts, and no bubblewrap to find (a server in a container has its walls already).
 */
export function aloneServerEnv(work: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    [IMAGE_ENV_VAR]: "1",
    PORT: "0",
    HOST: "127.0.0.1",
    WORKSPACE: join(work, "workspace"),
    SANDBOX_WARM_CODE: "none",
    SANDBOX_BWRAP_PATH: join(work, "no-bwrap"),
  };
}

export async function idleServerMemory(): Promise<BenchTable> {
  const work = mkdtempSync(join(tmpdir(), "edge-sandbox-bench-idle-"));
  try {
    const env = aloneServerEnv(work);
    const bundle = await bundleServer();
    const ours: { soon: Figures; reduced: Figures }[] = [];
    const unsnapshotted: { soon: Figures; reduced: Figures }[] = [];
    const bare: { soon: Figures; reduced: Figures }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(await idleFigures(imageServerArgs(bundle), env));
      unsnapshotted.push(await idleFigures([...SERVER_NODE_FLAGS, join(bundle, BUNDLE_ENTRY)], env));
      bare.push(await idleFigures([...SERVER_NODE_FLAGS, "-e", BARE_SERVER], env));
    }
    const at = (runs: { soon: Figures; reduced: Figures }[], when: "soon" | "reduced", figure: keyof Figures) => median(runs.map((run) => run[when][figure]));
    const both = (runs: { soon: Figures; reduced: Figures }[], figure: keyof Figures) => `${mib(at(runs, "soon", figure))} / ${mib(at(runs, "reduced", figure))}`;
    const ussRow = (metric: string, when: "soon" | "reduced") => {
      const uss = at(ours, when, "uss");
      return { metric, ours: mib(uss), baseline: mib(at(bare, when, "uss")), target: "≤ 12 MiB", met: uss <= USS_AIM };
    };
    return {
      title: "An idle container server's own memory",
      baselineLabel: "a bare Node HTTP server, started and read the same way",
      rows: [
        ussRow(`private memory (USS) of an idle server, ${SETTLE_MS / 1000} s after it listens`, "soon"),
        ussRow(`… ${REDUCED_MS / 1000} s after it listens, once V8's memory reducer has run`, "reduced"),
        { metric: `… its proportional share (PSS), ${SETTLE_MS / 1000} s / ${REDUCED_MS / 1000} s`, ours: both(ours, "pss"), baseline: both(bare, "pss") },
        { metric: `USS, ${SETTLE_MS / 1000} s / ${REDUCED_MS / 1000} s, of the bundle's main.js without the snapshot`, ours: both(unsnapshotted, "uss"), baseline: both(bare, "uss") },
        { metric: "… its PSS", ours: both(unsnapshotted, "pss"), baseline: both(bare, "pss") },
      ],
      notes: [`The bundle the image ships, started alone as its start script starts it, on the image's environment without warm code contexts; figures read ${SETTLE_MS / 1000} s and ${REDUCED_MS / 1000} s after it listens, median of ${ROUNDS} starts alternating with the others'.`],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
