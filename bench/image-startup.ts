/**
 * The production image: what it weighs, and how fast its server starts. Builds the image as
 * `npm run test:image` does (scripts/image/prepare.ts: the base made once, the build's steps cached,
 * so after the first run this takes seconds; it needs root, like test:image), then starts the image's
 * own entrypoint and command the way an engine does (test/container/image-server.ts) and times, from
 * the container's start, the server listening and the first command's result.
 *
 * Baselines from the same run: the size of the base image the Dockerfile starts from, and a bare
 * Node server started the same way in the same root filesystem (behind tini, answering a command by
 * spawning bash), which is as fast as a server in Node can start there. Measured warm (the image's
 * files in the page cache, as on an instance that has started before), cold (dropped from the cache
 * first, as on a fresh instance) and under the CPU share of the instance type wrangler.toml names.
 * Wall times move with the machine's load; the CPU time the server's process used until it listened
 * (10 ms resolution) does not, and is what an idle CPU would take.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXEC_ROUTES } from "../protocol/process.ts";
import { describeInstanceType, INSTANCE_TYPES } from "../scripts/deploy/instance-types.ts";
import { buildProjectImage, deployedInstanceType, imageRequirements } from "../scripts/image/prepare.ts";
import { openImage } from "../scripts/image/rootfs.ts";
import { imageSize, megabytes } from "../scripts/image/size.ts";
import { startImageServer, type ImageDescriptor, type ImageServerOptions } from "../test/container/image-server.ts";
import { makeInstanceGroup } from "../test/container/instance-group.ts";
import { evictFromPageCache } from "../test/container/page-cache.ts";
import { descendantsOf } from "../runtime/process-tree.ts";
import { median } from "./support.ts";
import type { BenchModule, BenchRow, BenchTable } from "./types.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const WARM_STARTS = 10;
const COLD_STARTS = 3;
const SHARED_CPU_STARTS = 5;
const READY_AIM_MS = 300;

/** The baseline: the least a Node server does to answer a command (PORT and HOST come from the image's env). */
const BARE_SERVER = `
const http = require("node:http"), { execFile } = require("node:child_process");
http.createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk)).on("end", () => {
    if (req.url !== ${JSON.stringify(EXEC_ROUTES.execute)}) return res.end("{}");
    execFile("bash", ["-c", JSON.parse(body).command], (error, stdout, stderr) =>
      res.end(JSON.stringify({ exitCode: error ? error.code : 0, stdout, stderr })));
  });
}).listen(Number(process.env.PORT), process.env.HOST);
`;

interface Start {
  readyMs: number;
  firstCommandMs: number;
  /** CPU the server's process had used when it was seen listening (both its stages: it re-executes itself). */
  cpuMs: number;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) of the container's Node process, in ms; a load-independent start-up figure. */
function nodeCpuMs(containerPid: number): number {
  for (const pid of descendantsOf(containerPid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(node)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    } catch {
      // gone meanwhile
    }
  }
  return Number.NaN;
}

async function startOnce(image: ImageDescriptor, options: ImageServerOptions): Promise<Start> {
  const server = await startImageServer(image, { pollMs: 2, ...options });
  const cpuMs = nodeCpuMs(server.pid);
  try {
    const reply = await fetch(server.url + EXEC_ROUTES.execute, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: "echo ready" }) });
    const result = (await reply.json()) as { stdout?: string };
    if (result.stdout !== "ready\n") throw new Error(`first command answered ${JSON.stringify(result)}`);
    return { readyMs: server.listeningAt - server.startedAt, firstCommandMs: performance.now() - server.startedAt, cpuMs };
  } finally {
    await server.close();
  }
}

/** `count` starts each of the image's server and the bare one, alternating; `before` runs before each. */
async function compare(image: ImageDescriptor, count: number, options: ImageServerOptions = {}, before: () => void = () => {}): Promise<{ ours: Start[]; bare: Start[] }> {
  const ours: Start[] = [];
  const bare: Start[] = [];
  for (let i = 0; i < count; i++) {
    before();
    ours.push(await startOnce(image, options));
    before();
    bare.push(await startOnce(image, { ...options, command: ["node", "-e", BARE_SERVER] }));
  }
  return { ours, bare };
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const medianOf = (starts: Start[], key: keyof Start) => median(starts.map((start) => start[key]));

function startRows(label: string, measured: { ours: Start[]; bare: Start[] }, aim: boolean): BenchRow[] {
  const ready = medianOf(measured.ours, "readyMs");
  return [
    {
      metric: `${label}: container start → server listening, median of ${measured.ours.length}`,
      ours: ms(ready),
      baseline: ms(medianOf(measured.bare, "readyMs")),
      ...(aim ? { target: `≤ ${READY_AIM_MS} ms`, met: ready <= READY_AIM_MS } : {}),
    },
    { metric: `${label}: container start → first command's result, median`, ours: ms(medianOf(measured.ours, "firstCommandMs")), baseline: ms(medianOf(measured.bare, "firstCommandMs")) },
    { metric: `${label}: CPU time of the server's process until it listens, median`, ours: ms(medianOf(measured.ours, "cpuMs")), baseline: ms(medianOf(measured.bare, "cpuMs")) },
  ];
}

const bench: BenchModule = {
  name: "image",
  async run(): Promise<BenchTable[]> {
    const title = "The production image: size and start-up";
    const unmet = imageRequirements();
    if (unmet) return [{ title, baselineLabel: "", rows: [], notes: [`skipped: building the image needs root on Linux, as npm run test:image does (${unmet})`] }];

    const work = mkdtempSync(join(tmpdir(), "edge-sandbox-bench-image-"));
    const { base, id } = buildProjectImage(root, work);
    const opened = openImage(id);
    const instanceName = deployedInstanceType(root);
    const instance = INSTANCE_TYPES[instanceName];
    const group = makeInstanceGroup(`bench-image-${process.pid}`, { memoryBytes: instance.memoryBytes, vcpu: instance.vcpu });
    try {
      const image: ImageDescriptor = { rootfs: opened.rootfs, entrypoint: opened.entrypoint, cmd: opened.cmd, env: opened.env, workingDir: opened.workingDir };
      writeFileSync(join(work, "image.json"), JSON.stringify(image));
      const size = imageSize(id);
      const baseSize = imageSize(base);
      const packages = size.layers.reduce((largest, layer) => (layer.bytes > largest.bytes && layer !== size.layers[0] ? layer : largest), size.layers[1]!);
      const rows: BenchRow[] = [
        { metric: "image size (uncompressed)", ours: megabytes(size.bytes), baseline: `${megabytes(baseSize.bytes)} its base`, target: "≤ 600 MB", met: size.bytes <= 600e6 },
        { metric: `… its largest layer of our own (${packages.step.slice(0, 40)}…)`, ours: megabytes(packages.bytes), baseline: "" },
      ];
      rows.push(...startRows("warm", await compare(image, WARM_STARTS), true));
      rows.push(...startRows("cold (the image's files dropped from the page cache)", await compare(image, COLD_STARTS, {}, () => evictFromPageCache(image.rootfs)), false));
      if (group) rows.push(...startRows(`on ${instanceName}'s CPU share`, await compare(image, SHARED_CPU_STARTS, { procsFiles: group.procsFiles }), false));
      const notes = [
        `The bare server is Node answering a command by spawning bash, started the same way in the same root filesystem. The instance type is wrangler.toml's: ${describeInstanceType(instanceName)}.`,
      ];
      if (!group) notes.push("No control group could be made here, so the instance's CPU share was not measured.");
      return [{ title, baselineLabel: "its base image; a bare Node server in the same root filesystem", rows, notes }];
    } finally {
      opened.close();
      try {
        group?.remove();
      } catch {
        // a container not yet reaped; the next run's group has its own name
      }
      rmSync(work, { recursive: true, force: true });
    }
  },
};

export default bench;
