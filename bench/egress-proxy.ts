/**
 * What the egress proxy costs a sandbox: HTTP requests from inside a sandbox's container (through
 * the runtime's proxy: redirect, connection tracking, judging, forwarding by name) beside the same
 * client on the host going straight to the server; a 256 MiB download over HTTP and over HTTPS with
 * interception (the proxy terminates TLS with the sandbox's authority and opens its own to the
 * server) beside the same download direct; the first HTTPS request to a name (its leaf
 * certificate signed then) beside one to a name already signed; and what a policy change costs
 * (the runtime's PUT, which rewrites the namespace's firewall when the container runs). The servers are on loopback,
 * reached from inside through the proxy's test name map: no internet.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { networkPolicySchema, OPEN_POLICY, type NetworkPolicy } from "../protocol/network.ts";
import { startRuntime, type RunningRuntime } from "../runtime/server.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { median, ms, nowMs, percentile } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const DOWNLOAD_BYTES = 256 * 1024 * 1024;
const REQUESTS = 200;
const POLICY_CHANGES = 40;
/** Names the sandbox has not reached before: each one's first HTTPS request signs a leaf certificate. */
const NEW_NAMES = Array.from({ length: 40 }, (_, i) => `n${i + 1}.bench.test`);
/** Longer than the proxy keeps an idle connection to a server, so the second round dials anew as the first did. */
const POOL_IDLE_WAIT_MS = 4500;
const KEY = "bench-egress";
const SECRET = "bench-secret-value";

/** A policy as an agent's would be: deny by default, a few hosts allowed, a credential injected. */
const POLICY = networkPolicySchema.parse({
  default: "deny",
  rules: [
    { action: "allow", host: "bench.test", ports: [80, 443] },
    { action: "allow", host: "*.example.com", ports: [443] },
    { action: "allow", host: "*.bench.test", ports: [443] },
    { action: "deny", cidr: "10.0.0.0/8" },
    { action: "allow", host: "git.example.org", ports: [22] },
  ],
  inject: [{ host: "bench.test", bearer: "TOKEN" }],
});

/** N sequential GETs, each on a new connection; prints each one's milliseconds as JSON. */
const LATENCY_CLIENT = `
const { get } = require(process.env.BENCH_URL.startsWith("https") ? "node:https" : "node:http");
const url = process.env.BENCH_URL, n = Number(process.env.BENCH_N), out = [];
const once = () => new Promise((resolve, reject) => {
  const t0 = performance.now();
  get(url, { agent: false, servername: process.env.BENCH_SERVERNAME }, (res) => { res.resume(); res.on("end", () => resolve(performance.now() - t0)); }).on("error", reject);
});
(async () => { for (let i = 0; i < n; i++) out.push(await once()); console.log(JSON.stringify(out)); })();
`;

/** One GET to each name in BENCH_NAMES in turn, each on a new connection; prints each one's milliseconds as JSON. */
const NAMES_CLIENT = `
const { get } = require("node:https");
const names = process.env.BENCH_NAMES.split(","), out = [];
const once = (name) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  get("https://" + name + "/", { agent: false }, (res) => { res.resume(); res.on("end", () => resolve(performance.now() - t0)); }).on("error", reject);
});
(async () => { for (const name of names) out.push(await once(name)); console.log(JSON.stringify(out)); })();
`;

export function certificates(dir: string): { ca: string; key: string; cert: string } {
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=bench CA", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE"]);
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", "leaf.key", "-out", "leaf.pem", "-CA", "ca.pem", "-CAkey", "ca.key", "-subj", "/CN=bench.test", "-days", "2", "-addext", "subjectAltName=DNS:bench.test,DNS:*.bench.test"]);
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return { ca: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") };
}

/** The upstream servers, in a process of their own. */
export async function startUpstream(certs: { key: string; cert: string }, downloadBytes = DOWNLOAD_BYTES): Promise<{ http: number; https: number; stop(): void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./egress-upstream-server.ts", import.meta.url))], {
    env: { ...process.env, BENCH_DOWNLOAD_BYTES: String(downloadBytes), BENCH_KEY: certs.key, BENCH_CERT: certs.cert },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ports = await new Promise<{ http: number; https: number }>((resolve, reject) => {
    child.stdout.once("data", (data: Buffer) => resolve(JSON.parse(data.toString()) as { http: number; https: number }));
    child.once("exit", (code) => reject(new Error(`the upstream servers exited (${code})`)));
  });
  return { ...ports, stop: () => child.kill() };
}

class Bench {
  readonly #runtime: RunningRuntime;
  readonly #sandbox: { url: string; secret: string };

  constructor(runtime: RunningRuntime, sandbox: { url: string; secret: string }) {
    this.#runtime = runtime;
    this.#sandbox = sandbox;
  }

  async sh(command: string, env: Record<string, string> = {}, timeout = 600_000): Promise<string> {
    const response = await fetch(`${this.#sandbox.url}/api/execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.#sandbox.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ command, env, timeout }),
    });
    const result = (await response.json()) as { stdout: string; stderr: string; exitCode: number };
    if (result.exitCode !== 0) throw new Error(`${command.slice(0, 80)}: exit ${result.exitCode}: ${result.stderr.slice(0, 500)}`);
    return result.stdout;
  }

  /** The runtime's PUT of a sandbox's egress; its milliseconds. */
  async setEgress(key: string, policy: NetworkPolicy): Promise<number> {
    const t0 = nowMs();
    const response = await fetch(`${this.#runtime.url}/containers/${key}/egress`, {
      method: "PUT",
      headers: { authorization: `Bearer ${this.#runtime.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ policy, secrets: { TOKEN: SECRET } }),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`PUT egress: ${response.status}`);
    return nowMs() - t0;
  }
}

/** The latency client on the host, straight to the server. */
function hostLatencies(url: string, caFile: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, BENCH_URL: url, BENCH_N: String(REQUESTS), BENCH_SERVERNAME: "bench.test", NODE_EXTRA_CA_CERTS: caFile };
    const child = spawn(process.execPath, ["-e", LATENCY_CLIENT], { env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (data: Buffer) => (out += data));
    child.once("close", (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(`latency client exited ${code}`))));
  });
}

/** curl's download speed (bytes/s) for `url`, on the host or inside. */
function curlSpeed(output: string): number {
  const [size, speed] = output.trim().split(" ").map(Number) as [number, number];
  if (size !== DOWNLOAD_BYTES) throw new Error(`downloaded ${size} bytes, not ${DOWNLOAD_BYTES}`);
  return speed;
}
const CURL_FORMAT = "%{size_download} %{speed_download}";
const mbps = (bytesPerSecond: number) => `${(bytesPerSecond / 1e6).toFixed(0)} MB/s`;

async function run(): Promise<BenchTable[]> {
  if (!detectIsolation().bwrap.available) throw new Error("bubblewrap is not available: a sandbox with its own network needs it");
  const certDir = mkdtempSync(join(tmpdir(), "bench-egress-certs-"));
  const certs = certificates(certDir);
  const upstream = await startUpstream(certs);
  const [webPort, securePort] = [upstream.http, upstream.https];
  const dataDir = mkdtempSync(join(tmpdir(), "bench-egress-"));
  chmodSync(dataDir, 0o711);
  const runtime = await startRuntime({
    dataDir,
    isolation: "bwrap",
    egressTestHosts: {
      hosts: { "bench.test:80": `127.0.0.1:${webPort}`, "bench.test:443": `127.0.0.1:${securePort}`, ...Object.fromEntries(NEW_NAMES.map((name) => [`${name}:443`, `127.0.0.1:${securePort}`])) },
      ca: certs.ca,
    },
  });
  try {
    const started = await fetch(`${runtime.url}/containers/${KEY}/start`, {
      method: "POST",
      headers: { authorization: `Bearer ${runtime.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ isolation: { allowNetwork: true }, egress: { policy: POLICY, secrets: { TOKEN: SECRET } } }),
    });
    const body = (await started.json()) as { ports: Record<string, number>; secret: string };
    if (!started.ok) throw new Error(`start: ${JSON.stringify(body)}`);
    const bench = new Bench(runtime, { url: `http://127.0.0.1:${body.ports["3000"]}`, secret: body.secret });

    // Latency: new connection per request, the sandbox through the proxy (with the policy, and open) and the host direct.
    const inside = async (url: string) => JSON.parse(await bench.sh(`node -e "$BENCH_CLIENT"`, { BENCH_CLIENT: LATENCY_CLIENT, BENCH_URL: url, BENCH_N: String(REQUESTS) })) as number[];
    const caFile = join(certDir, "ca.pem");
    await inside("http://bench.test/");
    await hostLatencies(`http://127.0.0.1:${webPort}/`, caFile);
    const withPolicy = await inside("http://bench.test/");
    const directHttp = await hostLatencies(`http://127.0.0.1:${webPort}/`, caFile);
    const httpsWithPolicy = await inside("https://bench.test/");
    await bench.setEgress(KEY, OPEN_POLICY);
    const open = await inside("http://bench.test/");
    await bench.setEgress(KEY, POLICY);
    const directHttps = await hostLatencies(`https://127.0.0.1:${securePort}/`, caFile);

    // The first request to each new name (a leaf signed for it), then to the same names once the proxy's idle connections are gone.
    // Each name resolved first: our resolver's first answer for a name also adds its address to the firewall's named set.
    await bench.sh(`for name in ${NEW_NAMES.join(" ")}; do getent hosts $name > /dev/null; done`);
    const byName = async () => JSON.parse(await bench.sh(`node -e "$BENCH_CLIENT"`, { BENCH_CLIENT: NAMES_CLIENT, BENCH_NAMES: NEW_NAMES.join(",") })) as number[];
    const firstToName = await byName();
    await new Promise((resolve) => setTimeout(resolve, POOL_IDLE_WAIT_MS));
    const alreadySigned = await byName();

    // 256 MiB, through the proxy and direct, alternating so that machine noise lands on both.
    const downloadInside = async (url: string) => curlSpeed(await bench.sh(`curl -sS -o /dev/null -w '${CURL_FORMAT}' ${url}`));
    const downloadHost = async (url: string, extra: string[] = []) => curlSpeed((await promisify(execFile)("curl", ["-sS", "-o", "/dev/null", "-w", CURL_FORMAT, ...extra, url], { encoding: "utf8" })).stdout);
    const speeds = { http: [] as number[], httpDirect: [] as number[], https: [] as number[], httpsDirect: [] as number[] };
    for (let round = 0; round < 3; round++) {
      speeds.http.push(await downloadInside("http://bench.test/big"));
      speeds.httpDirect.push(await downloadHost(`http://127.0.0.1:${webPort}/big`));
      speeds.https.push(await downloadInside("https://bench.test/big"));
      speeds.httpsDirect.push(await downloadHost(`https://bench.test:${securePort}/big`, ["--cacert", caFile, "--resolve", `bench.test:${securePort}:127.0.0.1`]));
    }
    const best = (values: number[]) => Math.max(...values);

    // A policy change: the runtime's PUT with the container running (the firewall rewritten) and for a sandbox with none.
    const changes: number[] = [];
    const idle: number[] = [];
    const variants = [POLICY, networkPolicySchema.parse({ ...POLICY, rules: [...POLICY.rules, { action: "deny", cidr: "192.0.2.0/24", ports: [25] }] })];
    for (let i = 0; i < POLICY_CHANGES; i++) {
      changes.push(await bench.setEgress(KEY, variants[i % 2]!));
      idle.push(await bench.setEgress("bench-egress-idle", variants[i % 2]!));
    }

    const httpRatio = best(speeds.http) / best(speeds.httpDirect);
    const httpsRatio = best(speeds.https) / best(speeds.httpsDirect);
    return [
      {
        title: `HTTP from inside a sandbox through the egress proxy (GET, a new connection each, ${REQUESTS} each)`,
        baselineLabel: "the same client on the host, straight to the server",
        rows: [
          { metric: "median, with a policy (deny by default, an injected bearer)", ours: ms(median(withPolicy)), baseline: ms(median(directHttp)) },
          { metric: "p99, with a policy", ours: ms(percentile(withPolicy, 99)), baseline: ms(percentile(directHttp, 99)) },
          { metric: "median, open policy (still through the proxy)", ours: ms(median(open)), baseline: ms(median(directHttp)) },
          {
            metric: "median, HTTPS with interception, with the policy",
            ours: ms(median(httpsWithPolicy)),
            baseline: `${ms(median(directHttps))} (HTTPS direct)`,
          },
        ],
        notes: ["Both clients are the same Node script; the one inside runs in the sandbox's container, its connections redirected to the runtime's proxy, which finds their destination in conntrack, judges the request and forwards it by name."],
      },
      {
        title: `HTTPS from inside a sandbox to a name it has not reached before (GET, a new connection each, ${NEW_NAMES.length} names)`,
        baselineLabel: "the same names again, each leaf already signed",
        rows: [
          { metric: "median, the first request to a name (its leaf certificate signed in the runtime)", ours: ms(median(firstToName)), baseline: ms(median(alreadySigned)) },
          { metric: "p99", ours: ms(percentile(firstToName, 99)), baseline: ms(percentile(alreadySigned, 99)) },
        ],
        notes: ["Every name is resolved once before; both rounds resolve it again, make TLS to the proxy and the proxy's own TLS to the server; only the first signs. Certificates are written and signed in the runtime's process: no key leaves its memory."],
      },
      {
        title: `A ${DOWNLOAD_BYTES / 1024 / 1024} MiB download through the egress proxy (curl, best of 3)`,
        baselineLabel: "curl on the host, straight to the server",
        rows: [
          { metric: "HTTP", ours: mbps(best(speeds.http)), baseline: mbps(best(speeds.httpDirect)), target: "≥ 50% of direct", met: httpRatio >= 0.5 },
          { metric: "HTTPS, intercepted (TLS terminated and opened again)", ours: mbps(best(speeds.https)), baseline: mbps(best(speeds.httpsDirect)), target: "≥ 50% of direct", met: httpsRatio >= 0.5 },
        ],
        notes: [`Ratios: HTTP ${(httpRatio * 100).toFixed(0)}%, HTTPS ${(httpsRatio * 100).toFixed(0)}% of direct. The proxy runs in the runtime's event loop.`],
      },
      {
        title: `A network policy change (the runtime's PUT, ${POLICY_CHANGES} alternating policies)`,
        baselineLabel: "the same PUT for a sandbox whose container is not running",
        rows: [
          { metric: "median (the namespace's firewall rewritten, open connections judged again)", ours: ms(median(changes)), baseline: ms(median(idle)) },
          { metric: "p99", ours: ms(percentile(changes, 99)), baseline: ms(percentile(idle, 99)) },
        ],
      },
    ];
  } finally {
    await runtime.close();
    upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(certDir, { recursive: true, force: true });
  }
}

export default { name: "egress-proxy", run } satisfies BenchModule;
