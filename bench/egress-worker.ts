/**
 * What the Worker's outbound handler costs a container's traffic on this machine: a container that
 * workerd runs (Miniflare on the runtime's Docker engine) downloads 256 MiB over HTTP and HTTPS from
 * a host its Durable Object intercepts (`interceptOutboundHttp(s)`: the egress proxy tunnels the
 * connection to workerd's egress listener, and the handler fetches the server), beside the same
 * download from a host nobody intercepts (the egress proxy alone, as for every sandbox) in the same
 * container and run, alternating; and small requests, a new connection each, both ways. The servers
 * are on loopback, reached from inside through the proxy's test name map: no internet.
 */
import { mkdtempSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { startRuntime } from "../runtime/server.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { certificates, startUpstream } from "./egress-proxy.ts";
import { median, ms, percentile } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const DOWNLOAD_BYTES = 256 * 1024 * 1024;
const REQUESTS = 200;
const ROUNDS = 3;
const SECRET = "bench-egress-worker-secret-0123456789";
/** Intercepted by the Durable Object (its handler fetches the server); `bench.test` is not. */
const INTERCEPTED = "worker.bench.test";

/**
 * The Worker: its Durable Object starts a container with HTTP and HTTPS of INTERCEPTED intercepted,
 * and runs commands in it; its handler sends each request on to the server (over plain HTTP: the
 * container's TLS ends in the egress proxy) and streams the answer back.
 */
const WORKER_SOURCE = `
import { DurableObject, WorkerEntrypoint } from "cloudflare:workers";

export class Handler extends WorkerEntrypoint {
  async fetch(request) {
    const url = new URL(request.url);
    return fetch(this.ctx.props.origin + url.pathname + url.search, { method: request.method, headers: request.headers, body: request.body });
  }
}

export class Box extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    const container = this.ctx.container;
    const secret = url.searchParams.get("secret");
    if (url.pathname === "/start") {
      const { host, origin } = await request.json();
      const handler = this.ctx.exports.Handler({ props: { origin } });
      await container.interceptOutboundHttp(host, handler);
      await container.interceptOutboundHttps(host, handler);
      container.start({ env: { SANDBOX_ENGINE_SERVER_SECRET: secret, SANDBOX_ENGINE_START: JSON.stringify({ isolation: { allowNetwork: true } }) }, enableInternet: true });
      return new Response("started");
    }
    const body = await request.text();
    for (let attempt = 0; ; attempt++) {
      try {
        return await container.getTcpPort(3000).fetch("http://container/api/execute", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer " + secret },
          body,
        });
      } catch (error) {
        if (attempt >= 200) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
}

export default {
  fetch(request, env) {
    return env.BOX.get(env.BOX.idFromName("bench")).fetch(request);
  },
};
`;

/** N sequential GETs, each on a new connection; prints each one's milliseconds as JSON. */
const LATENCY_CLIENT = `
const { get } = require(process.env.BENCH_URL.startsWith("https") ? "node:https" : "node:http");
const url = process.env.BENCH_URL, n = Number(process.env.BENCH_N), out = [];
const once = () => new Promise((resolve, reject) => {
  const t0 = performance.now();
  get(url, { agent: false }, (res) => { res.resume(); res.on("end", () => resolve(performance.now() - t0)); }).on("error", reject);
});
(async () => { for (let i = 0; i < n; i++) out.push(await once()); console.log(JSON.stringify(out)); })();
`;

const CURL_FORMAT = "%{size_download} %{speed_download}";
const mbps = (bytesPerSecond: number) => `${(bytesPerSecond / 1e6).toFixed(0)} MB/s`;

async function run(): Promise<BenchTable[]> {
  if (!detectIsolation().bwrap.available) throw new Error("bubblewrap is not available: a sandbox with its own network needs it");
  const certDir = mkdtempSync(join(tmpdir(), "bench-egress-worker-certs-"));
  const certs = certificates(certDir);
  const upstream = await startUpstream(certs, DOWNLOAD_BYTES);
  const dataDir = mkdtempSync(join(tmpdir(), "bench-egress-worker-"));
  chmodSync(dataDir, 0o711);
  const runtime = await startRuntime({
    dataDir,
    isolation: "bwrap",
    egressTestHosts: {
      hosts: {
        "bench.test:80": `127.0.0.1:${upstream.http}`,
        "bench.test:443": `127.0.0.1:${upstream.https}`,
        [`${INTERCEPTED}:80`]: `127.0.0.1:${upstream.http}`,
        [`${INTERCEPTED}:443`]: `127.0.0.1:${upstream.https}`,
      },
      ca: certs.ca,
    },
  });
  let mf: Miniflare | undefined;
  try {
    mf = new Miniflare(
      convertV4MiniflareOptions({
        containerEngine: { localDocker: { socketPath: runtime.engine.url, containerEgressInterceptorImage: "edge-sandbox/egress-sidecar:local" } },
        workers: [
          {
            name: "egress-worker-bench",
            modules: true,
            script: WORKER_SOURCE,
            compatibilityDate: "2026-10-20",
            durableObjects: { BOX: { className: "Box", container: { imageName: "cloudflare-dev/box:bench" } } },
          },
        ],
      }),
    );
    const worker = mf;
    const started = await worker.dispatchFetch(`http://worker/start?secret=${SECRET}`, { method: "POST", body: JSON.stringify({ host: INTERCEPTED, origin: `http://127.0.0.1:${upstream.http}` }) });
    if (!started.ok) throw new Error(`start: ${started.status} ${await started.text()}`);
    const sh = async (command: string, env: Record<string, string> = {}): Promise<string> => {
      const response = await worker.dispatchFetch(`http://worker/exec?secret=${SECRET}`, { method: "POST", body: JSON.stringify({ command, env, timeout: 600_000 }) });
      const result = (await response.json()) as { stdout: string; stderr: string; exitCode: number };
      if (result.exitCode !== 0) throw new Error(`${command.slice(0, 80)}: exit ${result.exitCode}: ${result.stderr.slice(0, 500)}`);
      return result.stdout;
    };
    const download = async (url: string) => {
      const [size, speed] = (await sh(`curl -sS -o /dev/null -w '${CURL_FORMAT}' ${url}`)).trim().split(" ").map(Number) as [number, number];
      if (size !== DOWNLOAD_BYTES) throw new Error(`${url}: downloaded ${size} bytes, not ${DOWNLOAD_BYTES}`);
      return speed;
    };
    const latencies = async (url: string) => JSON.parse(await sh(`node -e "$BENCH_CLIENT"`, { BENCH_CLIENT: LATENCY_CLIENT, BENCH_URL: url, BENCH_N: String(REQUESTS) })) as number[];

    // Warm both ways (the handler's isolate, the proxy's leaf certificates), then alternate so that machine noise lands on both.
    await latencies(`http://${INTERCEPTED}/`);
    await latencies("http://bench.test/");
    const speeds = { worker: [] as number[], proxy: [] as number[], workerTls: [] as number[], proxyTls: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      speeds.worker.push(await download(`http://${INTERCEPTED}/big`));
      speeds.proxy.push(await download("http://bench.test/big"));
      speeds.workerTls.push(await download(`https://${INTERCEPTED}/big`));
      speeds.proxyTls.push(await download("https://bench.test/big"));
    }
    const viaWorker = await latencies(`http://${INTERCEPTED}/`);
    const viaProxy = await latencies("http://bench.test/");
    const viaWorkerTls = await latencies(`https://${INTERCEPTED}/`);
    const viaProxyTls = await latencies("https://bench.test/");
    const best = (values: number[]) => Math.max(...values);
    return [
      {
        title: `A ${DOWNLOAD_BYTES / 1024 / 1024} MiB download from a container workerd runs, through the Worker's outbound handler (curl, best of ${ROUNDS})`,
        baselineLabel: "the same container, a host nobody intercepts: the egress proxy alone",
        rows: [
          { metric: "HTTP", ours: mbps(best(speeds.worker)), baseline: mbps(best(speeds.proxy)) },
          { metric: "HTTPS (TLS terminated by the egress proxy, the handler's fetch plain HTTP)", ours: mbps(best(speeds.workerTls)), baseline: `${mbps(best(speeds.proxyTls))} (terminated, then TLS again to the server)` },
        ],
        notes: [
          `Ratios: HTTP ${((best(speeds.worker) / best(speeds.proxy)) * 100).toFixed(0)}%, HTTPS ${((best(speeds.workerTls) / best(speeds.proxyTls)) * 100).toFixed(0)}% of the proxy alone. Through the handler the bytes pass the egress proxy, workerd's tunnel, the Worker's fetch and workerd again.`,
        ],
      },
      {
        title: `Small requests from a container workerd runs, through the Worker's outbound handler (GET, a new connection each, ${REQUESTS} each)`,
        baselineLabel: "the same client, a host nobody intercepts",
        rows: [
          { metric: "median, HTTP", ours: ms(median(viaWorker)), baseline: ms(median(viaProxy)) },
          { metric: "p99, HTTP", ours: ms(percentile(viaWorker, 99)), baseline: ms(percentile(viaProxy, 99)) },
          { metric: "median, HTTPS", ours: ms(median(viaWorkerTls)), baseline: ms(median(viaProxyTls)) },
        ],
        notes: ["Each intercepted connection costs a CONNECT to workerd's egress listener (on loopback) before its first byte goes on; a host nobody intercepts is not asked about."],
      },
    ];
  } finally {
    await mf?.dispose();
    await runtime.close();
    upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(certDir, { recursive: true, force: true });
  }
}

export default { name: "egress-worker", run } satisfies BenchModule;
