/**
 * Instructions the container server runs until it listens, counted under valgrind (callgrind), beside
 * a bare Node HTTP server counted the same way. Wall and CPU times of a start move with the machine's
 * load by more than a change to the start is worth; the instruction count moves by about 1%, so a
 * change's effect on the start shows here first (the image benchmark's times on a quarter of a CPU
 * follow it: on `basic` every CPU millisecond is about four at start-up).
 *
 * The server is the bundle the image ships (container/boot/bundle.ts), started as the image's start
 * script starts it: from its startup snapshot, on its own environment, with the server's Node flags,
 * no warm code contexts, and no bubblewrap to probe (the image has none); and its main.js without the
 * snapshot, as the local runtime starts it. A preloaded script ends each process the moment its
 * server listens. valgrind's instrumentation makes each count take about a minute.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleServer } from "../container/boot/bundle.ts";
import { BUNDLE_ENTRY } from "../server-kit/bundle-layout.ts";
import { SERVER_NODE_FLAGS } from "../server-kit/node-flags.ts";
import { findExecutable } from "../server-kit/executables.ts";
import { aloneServerEnv, imageServerArgs } from "./idle-server-memory.ts";
import type { BenchModule, BenchTable } from "./types.ts";

/** Ends the process once its first server listens (preloaded with -r). */
const EXIT_ON_LISTEN = `
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => process.exit(0));
  return listen.apply(this, args);
};
`;

/** The baseline: a Node HTTP server and nothing else, listening where the server does. */
const BARE_SERVER = `require("node:http").createServer((req, res) => res.end()).listen(Number(process.env.PORT), process.env.HOST);`;

/** Instructions (callgrind's "Collected") of `node <args>` until it exits. */
function countInstructions(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("valgrind", ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.once("error", reject);
    child.once("exit", (code) => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (code !== 0 || !collected) reject(new Error(`valgrind exited ${code}: ${stderr.slice(-500)}`));
      else resolve(Number(collected[1]));
    });
  });
}

const millions = (count: number) => `${(count / 1e6).toFixed(0)} M`;

const bench: BenchModule = {
  name: "server-instructions",
  async run(): Promise<BenchTable[]> {
    const title = "The container server's start, in instructions until it listens";
    if (!findExecutable("valgrind", (process.env.PATH ?? "").split(":"))) {
      return [{ title, baselineLabel: "", rows: [], notes: ["skipped: valgrind is not installed (apt-get install valgrind)"] }];
    }
    const work = mkdtempSync(join(tmpdir(), "edge-sandbox-bench-instructions-"));
    try {
      const preload = join(work, "exit-on-listen.cjs");
      writeFileSync(preload, EXIT_ON_LISTEN);
      const env = aloneServerEnv(work);
      const bundle = await bundleServer();
      // All at once: each is counted on its own, whatever else runs.
      const [ours, unsnapshotted, bare] = await Promise.all([
        countInstructions(imageServerArgs(bundle, ["-r", preload]), env),
        countInstructions([...SERVER_NODE_FLAGS, "-r", preload, join(bundle, BUNDLE_ENTRY)], env),
        countInstructions([...SERVER_NODE_FLAGS, "-r", preload, "-e", BARE_SERVER], env),
      ]);
      return [
        {
          title,
          baselineLabel: "a bare Node HTTP server, counted the same way",
          rows: [
            { metric: "instructions until the server listens (callgrind)", ours: millions(ours), baseline: millions(bare) },
            { metric: "… the bundle's main.js, without the snapshot", ours: millions(unsnapshotted), baseline: millions(bare) },
          ],
          notes: ["The server is the bundle the image ships, started from its snapshot on the image's environment without warm code contexts or bubblewrap to probe, as in the image."],
        },
      ];
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};

export default bench;
