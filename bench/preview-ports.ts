/**
 * Preview ports: a web server started inside a sandbox, reached through its preview port beside the
 * same server reached directly, in one run. Request latency (median, p99 of sequential keep-alive
 * GETs) and download throughput. Two tables: the whole chain (wrangler dev → Worker → Durable Object
 * → container server's proxy → the port), and the container server's proxy alone, without isolation
 * and under bwrap (where the sandbox's network is its own and the proxy goes through the forwarder).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, type RunningServer } from "../container/server.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { PREVIEW_SERVER_SOURCE } from "../test/preview-server.ts";
import { percentile, send, startStack } from "./chain-stack.ts";
import type { BenchModule, BenchRow, BenchTable } from "./types.ts";

const ROUNDS = 300;
const DOWNLOAD_BYTES = 256 * 1024 * 1024;
const DOWNLOAD_ROUNDS = 3;

const ms = (value: number) => `${value.toFixed(2)} ms`;
const mbps = (bytes: number, millis: number) => bytes / 1e6 / (millis / 1000);

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

interface Target {
  /** Base URL the server's paths are appended to (`…/` + `info`). */
  base: string;
  headers: Record<string, string>;
}

interface Figures {
  median: number;
  p99: number;
  mbps: number;
}

/** Latency and throughput of `ours` and `baseline`, interleaved so drift in machine load hits both alike. */
async function measure(ours: Target, baseline: Target): Promise<[Figures, Figures]> {
  const get = (target: Target) => async () => {
    const reply = await send(`${target.base}info`, "GET", undefined, target.headers);
    if (reply.status !== 200) throw new Error(`GET ${target.base}info: ${reply.status} ${reply.body.slice(0, 200)}`);
  };
  for (let i = 0; i < 30; i++) {
    await get(ours)();
    await get(baseline)();
  }
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < ROUNDS; i++) {
    times[0].push(await timed(get(ours)));
    times[1].push(await timed(get(baseline)));
  }
  const downloads: [number[], number[]] = [[], []];
  for (let i = 0; i < DOWNLOAD_ROUNDS; i++) {
    for (const [index, target] of [ours, baseline].entries()) {
      let bytes = 0;
      const millis = await timed(async () => {
        bytes = (await send(`${target.base}bytes?size=${DOWNLOAD_BYTES}`, "GET", undefined, target.headers, true)).bytes;
      });
      if (bytes !== DOWNLOAD_BYTES) throw new Error(`download through ${target.base}: ${bytes} bytes`);
      downloads[index]!.push(millis);
    }
  }
  return [0, 1].map((index) => {
    const sorted = times[index]!.sort((a, b) => a - b);
    const download = downloads[index]!.sort((a, b) => a - b);
    return { median: percentile(sorted, 50), p99: percentile(sorted, 99), mbps: mbps(DOWNLOAD_BYTES, percentile(download, 50)) };
  }) as [Figures, Figures];
}

function rows(ours: Figures, baseline: Figures, addedAim: number, aimText = `≤ baseline + ${addedAim} ms`): BenchRow[] {
  return [
    { metric: "GET median", ours: ms(ours.median), baseline: ms(baseline.median), target: aimText, met: ours.median - baseline.median <= addedAim },
    { metric: "GET p99", ours: ms(ours.p99), baseline: ms(baseline.p99) },
    { metric: `download (${DOWNLOAD_BYTES / (1024 * 1024)} MiB, median of ${DOWNLOAD_ROUNDS})`, ours: `${ours.mbps.toFixed(0)} MB/s`, baseline: `${baseline.mbps.toFixed(0)} MB/s`, target: "≥ 100 MB/s", met: ours.mbps >= 100 },
  ];
}

/** The preview server as a background process of a container server; resolves with its port. */
async function previewServerIn(call: (method: string, path: string, body?: unknown) => Promise<any>, startPath: string, logsPath: (id: string) => string): Promise<number> {
  const started = await call("POST", startPath, { command: "exec node preview-server.cjs 0" });
  const id = started.process.id as string;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const logs = await call("GET", logsPath(id));
    const port = Number(/listening (\d+)/.exec(logs.stdout ?? "")?.[1] ?? 0);
    if (port > 0) return port;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the preview server did not start");
}

async function chainTable(): Promise<BenchTable> {
  const stack = await startStack();
  try {
    const sandbox = `${stack.url}/v1/sandboxes/bench-ports`;
    const auth = { authorization: `Bearer ${stack.token}` };
    const api = async (method: string, path: string, body?: unknown) => {
      const reply = await send(`${sandbox}${path}`, method, body, auth);
      if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${reply.body.slice(0, 300)}`);
      return JSON.parse(reply.body);
    };
    await api("POST", "/files/write", { path: "preview-server.cjs", content: PREVIEW_SERVER_SOURCE });
    const port = await previewServerIn(api, "/processes", (id) => `/processes/${id}/logs`);
    await api("POST", "/ports", { port });
    // The port's own host (`<port>-<id>.localhost`), sent to the Worker's loopback address as its Host.
    const previewHost = `${port}-bench-ports.localhost:${new URL(stack.url).port}`;
    const [ours, baseline] = await measure({ base: `${stack.url}/`, headers: { ...auth, host: previewHost } }, { base: `http://127.0.0.1:${port}/`, headers: {} });
    // The platform's own hop, for the aim: wrangler dev → Worker → Durable Object (an RPC that does not reach the container).
    const hops: number[] = [];
    for (let i = 0; i < ROUNDS; i++) hops.push(await timed(() => send(sandbox, "GET", undefined, auth)));
    const hop = percentile(hops.sort((a, b) => a - b), 50);
    return {
      title: `Preview port through the whole chain vs the same server directly (${ROUNDS} × GET, keep-alive, sequential)`,
      baselineLabel: "the sandbox's server directly",
      rows: [
        ...rows(ours, baseline, hop + 2, "≤ baseline + platform hop + 2 ms"),
        { metric: "platform hop: → Worker → Durable Object RPC (median)", ours: ms(hop), baseline: "—" },
      ],
      notes: ["Chain: client → wrangler dev → Worker → Durable Object (token check, fetch) → container server's proxy → the port. The local runtime runs sandboxes without isolation here, so the server is reachable directly on loopback."],
    };
  } finally {
    await stack.close();
  }
}

async function containerTable(): Promise<BenchTable> {
  const servers: { server: RunningServer; workspace: string }[] = [];
  const start = async (isolation: "none" | "bwrap") => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-bench-ports-")));
    writeFileSync(join(workspace, "preview-server.cjs"), PREVIEW_SERVER_SOURCE);
    const server = await startServer({ port: 0, host: "127.0.0.1", workspace, isolation });
    servers.push({ server, workspace });
    const call = async (method: string, path: string, body?: unknown) => JSON.parse((await send(`${server.url}${path}`, method, body)).body);
    const port = await previewServerIn(call, "/api/process/start", (id) => `/api/process/${id}/logs`);
    return { base: `${server.url}/api/ports/${port}/proxy/`, direct: `http://127.0.0.1:${port}/` };
  };
  try {
    const plain = await start("none");
    const [proxied, direct] = await measure({ base: plain.base, headers: {} }, { base: plain.direct, headers: {} });
    const table: BenchTable = {
      title: `Preview port: the container server's proxy vs the same server directly (${ROUNDS} × GET, keep-alive, sequential)`,
      baselineLabel: "the sandbox's server directly",
      rows: rows(proxied, direct, 1),
      notes: [],
    };
    if (detectIsolation().bwrap.available) {
      const confined = await start("bwrap");
      const [forwarded, proxiedAgain] = await measure({ base: confined.base, headers: {} }, { base: plain.base, headers: {} });
      table.rows.push(
        { metric: "under bwrap (forwarder): GET median", ours: ms(forwarded.median), baseline: `${ms(proxiedAgain.median)} (proxy, no isolation)`, target: "≤ proxy + 1 ms", met: forwarded.median - proxiedAgain.median <= 1 },
        { metric: "under bwrap (forwarder): GET p99", ours: ms(forwarded.p99), baseline: `${ms(proxiedAgain.p99)} (proxy, no isolation)` },
        { metric: "under bwrap (forwarder): download", ours: `${forwarded.mbps.toFixed(0)} MB/s`, baseline: `${proxiedAgain.mbps.toFixed(0)} MB/s (proxy, no isolation)`, target: "≥ 100 MB/s", met: forwarded.mbps >= 100 },
      );
      table.notes!.push("Under bwrap the sandbox's server is in the sandbox's own network namespace, out of the host's reach: its baseline is the proxy without isolation, measured in the same run.");
    } else table.notes!.push("bwrap is not available here: the forwarder was not measured.");
    return table;
  } finally {
    for (const { server, workspace } of servers) {
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  }
}

const bench: BenchModule = {
  name: "preview-ports",
  async run(): Promise<BenchTable[]> {
    return [await containerTable(), await chainTable()];
  },
};

export default bench;
