/**
 * An idle container server's own memory beside a bare Node HTTP server's, each started alone as the
 * image starts it (the bundle's startup snapshot on the image's environment, the server's Node flags,
 * no warm code contexts, no bubblewrap), and the bundle's main.js started without the snapshot (as the
 * local runtime starts it), read a few seconds after it listens: its private pages (USS:
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
import { BUNDLE_ENTRY, BUNDLE_SNAPSHOT } from "../server-kit/bundle-layout.ts";
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
    const ours: { uss: number; pss: number }[] = [];
    const unsnapshotted: { uss: number; pss: number }[] = [];
    const bare: { uss: number; pss: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ours.push(await idleFigures(imageServerArgs(bundle), env));
      unsnapshotted.push(await idleFigures([...SERVER_NODE_FLAGS, join(bundle, BUNDLE_ENTRY)], env));
      bare.push(await idleFigures([...SERVER_NODE_FLAGS, "-e", BARE_SERVER], env));
    }
    const uss = median(ours.map((figures) => figures.uss));
    return {
      title: "An idle container server's own memory",
      baselineLabel: "a bare Node HTTP server, started and read the same way",
      rows: [
        { metric: "private memory (USS) of an idle server", ours: mib(uss), baseline: mib(median(bare.map((figures) => figures.uss))), target: "≤ 12 MiB", met: uss <= USS_AIM },
        { metric: "… its proportional share (PSS)", ours: mib(median(ours.map((figures) => figures.pss))), baseline: mib(median(bare.map((figures) => figures.pss))) },
        { metric: "USS / PSS of the bundle's main.js, without the snapshot", ours: `${mib(median(unsnapshotted.map((figures) => figures.uss)))} / ${mib(median(unsnapshotted.map((figures) => figures.pss)))}`, baseline: "" },
      ],
      notes: [`The bundle the image ships, started alone as its start script starts it, on the image's environment without warm code contexts; figures read ${SETTLE_MS / 1000} s after it listens, median of ${ROUNDS} starts alternating with the others'.`],
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
