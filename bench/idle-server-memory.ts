/**
 * An idle container server's own memory beside a bare Node HTTP server's, each started alone as the
 * image starts it (the bundle on the image's environment, the server's Node flags, no warm code
 * contexts, no bubblewrap) and read a few seconds after it listens: its private pages (USS:
 * `Private_Clean` + `Private_Dirty` of smaps_rollup), which is what each more sandbox costs the
 * machine, and its proportional share (PSS), which adds its part of the pages every server shares
 * (the Node binary's). Starts alternate between the two and the median of each is reported.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleServer } from "../container/boot/bundle.ts";
import { IMAGE_ENV_VAR } from "../protocol/runtime.ts";
import { BUNDLE_ENTRY } from "../server-kit/bundle-layout.ts";
import { SERVER_NODE_FLAGS } from "../server-kit/node-flags.ts";
import { median, mib } from "./support.ts";
import type { BenchTable } from "./types.ts";

const ROUNDS = 3;
/** How long after listening the figures are read: the server's start has settled by then. */
const SETTLE_MS = 4000;
const USS_AIM = 12 * 1024 * 1024;

/** The baseline: a Node HTTP server and nothing else, saying where it listens as the server does. */
const BARE_SERVER = `const s = require("node:http").createServer((req, res) => res.end()); s.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + s.address().port));`;

/** Figures of /proc/<pid>/smaps_rollup, in bytes: USS (private pages, clean and dirty) and PSS. */
export function privateAndProportional(pid: number): { uss: number; pss: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) * 1024;
  return { uss: kb("Private_Clean") + kb("Private_Dirty"), pss: kb("Pss") };
}

/** Starts `node <args>`, waits until it says it listens and then SETTLE_MS, reads its figures, stops it. */
export async function idleFigures(args: string[], env: Record<string, string>): Promise<{ uss: number; pss: number }> {
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
    return privateAndProportional(child.pid!);
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
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
    const entry = join(await bundleServer(), BUNDLE_ENTRY);
    const ours: { uss: number; pss: number }[] = [];
    const bare: { uss: number; pss: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(await idleFigures([...SERVER_NODE_FLAGS, entry], env));
      bare.push(await idleFigures([...SERVER_NODE_FLAGS, "-e", BARE_SERVER], env));
    }
    const uss = median(ours.map((figures) => figures.uss));
    return {
      title: "An idle container server's own memory",
      baselineLabel: "a bare Node HTTP server, started and read the same way",
      rows: [
        { metric: "private memory (USS) of an idle server", ours: mib(uss), baseline: mib(median(bare.map((figures) => figures.uss))), target: "≤ 12 MiB", met: uss <= USS_AIM },
        { metric: "… its proportional share (PSS)", ours: mib(median(ours.map((figures) => figures.pss))), baseline: mib(median(bare.map((figures) => figures.pss))) },
      ],
      notes: [`The bundle the image ships, started alone on the image's environment without warm code contexts; figures read ${SETTLE_MS / 1000} s after it listens, median of ${ROUNDS} starts alternating with the baseline's.`],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
