/**
 * What confinement costs per command: the same exec against a server with `isolation: "bwrap"` (the
 * default: user namespace with an unprivileged uid, pid/ipc/uts/net namespaces) and one without,
 * alternating; the same with network allowed (a network namespace of the sandbox's own, behind
 * slirp4netns); and what a session costs (the exit trap that carries its shell state out), in the
 * default session and in one carrying functions, aliases and options, beside an isolated exec.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { directLauncher } from "../runtime/launch.ts";
import { ContainerPool } from "../runtime/pool.ts";
import { median, ms, nowMs, percentile, postJson, startServerProcess } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const COMMAND = "echo hello";
const WARMUP = 20;
const RUNS = 200;

async function execOnce(url: string, body: Record<string, unknown>): Promise<number> {
  const t0 = nowMs();
  const result = await postJson<{ stdout: string; exitCode: number }>(url, "/api/execute", body);
  if (result.stdout !== "hello\n") throw new Error(`unexpected output ${JSON.stringify(result)}`);
  return nowMs() - t0;
}

/** Alternates `a` and `b` so that machine noise lands on both. */
async function alternate(a: () => Promise<number>, b: () => Promise<number>): Promise<[number[], number[]]> {
  for (let i = 0; i < WARMUP; i++) {
    await a();
    await b();
  }
  const first: number[] = [];
  const second: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    first.push(await a());
    second.push(await b());
  }
  return [first, second];
}

/** An exec into a sandbox's container (the local runtime's default), as the Durable Object sends it. */
async function containerExecOnce(url: string, secret: string): Promise<number> {
  const t0 = nowMs();
  const response = await fetch(`${url}/api/execute`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ command: COMMAND }),
  });
  const result = (await response.json()) as { stdout: string };
  if (result.stdout !== "hello\n") throw new Error(`unexpected output ${JSON.stringify(result)}`);
  return nowMs() - t0;
}

/** Exec in a running container (entered, not built per command) beside the same exec without isolation. */
async function containerTable(plainUrl: string): Promise<BenchTable> {
  const dir = mkdtempSync(join(tmpdir(), "bench-containers-"));
  chmodSync(dir, 0o711);
  const pool = new ContainerPool({ dataDir: dir, launcher: directLauncher, isolation: { mode: "bwrap", env: {} } });
  try {
    const container = await pool.start("bench-exec", {});
    const url = `http://127.0.0.1:${container.port}`;
    const [inside, none] = await alternate(
      () => containerExecOnce(url, container.secret),
      () => execOnce(plainUrl, { command: COMMAND }),
    );
    const overhead = median(inside) - median(none);
    return {
      title: `Exec in a sandbox's container (\`${COMMAND}\`, ${RUNS} runs each)`,
      baselineLabel: "isolation: none, same server",
      rows: [
        { metric: "median", ours: ms(median(inside)), baseline: ms(median(none)), target: "≤ baseline + 1.5 ms", met: overhead <= 1.5 },
        { metric: "p99", ours: ms(percentile(inside, 99)), baseline: ms(percentile(none, 99)) },
        { metric: "median overhead", ours: ms(overhead), baseline: "0.00 ms" },
      ],
      notes: ["One bubblewrap per sandbox made at its start (user, mount, pid, ipc, uts, net namespaces): the server runs inside it and spawns commands there directly."],
    };
  } finally {
    await pool.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bench: BenchModule = {
  name: "isolation-exec",
  async run() {
    const tables: BenchTable[] = [];
    const plain = await startServerProcess({ SANDBOX_ISOLATION: "none" });
    try {
      const support = detectIsolation();
      if (support.bwrap.available) tables.push(await containerTable(plain.url));
      if (support.bwrap.available) {
        for (const networked of [false, true]) {
          const confined = await startServerProcess({ SANDBOX_ISOLATION: "bwrap", SANDBOX_ALLOW_NETWORK: networked ? "1" : "0" });
          try {
            const [bwrap, none] = await alternate(
              () => execOnce(confined.url, { command: COMMAND }),
              () => execOnce(plain.url, { command: COMMAND }),
            );
            const overhead = median(bwrap) - median(none);
            tables.push({
              title: `Isolation cost per exec${networked ? " with network allowed" : ""} (\`${COMMAND}\`, ${RUNS} runs each, bubblewrap ${support.bwrap.version})`,
              baselineLabel: "isolation: none",
              rows: [
                { metric: "median", ours: ms(median(bwrap)), baseline: ms(median(none)), target: "≤ baseline + 15 ms", met: overhead <= 15 },
                { metric: "p99", ours: ms(percentile(bwrap, 99)), baseline: ms(percentile(none, 99)) },
                { metric: "median overhead", ours: ms(overhead), baseline: "0.00 ms" },
              ],
              notes: [
                networked
                  ? "bwrap entered into the sandbox's own network namespace (nsenter), which slirp4netns connects outward, host loopback excluded."
                  : "A server run outside any container (`npm run container` with SANDBOX_ISOLATION=bwrap) wraps each command in its own bwrap: what the runtime's containers avoid.",
              ],
            });
          } finally {
            await confined.close();
          }
        }
      } else {
        tables.push({
          title: "Isolation cost per exec",
          baselineLabel: "isolation: none",
          rows: [{ metric: "median", ours: "n/a", baseline: "n/a" }],
          notes: [`bwrap not available: ${support.bwrap.reason}`],
        });
      }

      // A command naming no session runs in the default session (its state captured by the exit
      // trap); `isolated: true` is the sessionless exec, same server, alternating.
      const [inDefault, isolated] = await alternate(
        () => execOnce(plain.url, { command: COMMAND }),
        () => execOnce(plain.url, { command: COMMAND, isolated: true }),
      );
      const defaultOverhead = median(inDefault) - median(isolated);
      // A session that carries a function, an alias and an option: each command restores them.
      await postJson(plain.url, "/api/execute", { command: "greet() { echo hi; }; alias ll='ls -l'; set -o pipefail", sessionId: "bench-stateful" });
      const [stateful, isolatedAgain] = await alternate(
        () => execOnce(plain.url, { command: COMMAND, sessionId: "bench-stateful" }),
        () => execOnce(plain.url, { command: COMMAND, isolated: true }),
      );
      const statefulOverhead = median(stateful) - median(isolatedAgain);
      tables.push({
        title: `Session cost per exec (\`${COMMAND}\`, ${RUNS} runs each, state captured by the exit trap)`,
        baselineLabel: "sessionless exec (`isolated: true`)",
        rows: [
          { metric: "exec in the default session, median", ours: ms(median(inDefault)), baseline: ms(median(isolated)), target: "≤ baseline + 0.5 ms", met: defaultOverhead <= 0.5 },
          { metric: "exec in the default session, p99", ours: ms(percentile(inDefault, 99)), baseline: ms(percentile(isolated, 99)) },
          { metric: "median overhead", ours: ms(defaultOverhead), baseline: "0.00 ms" },
          { metric: "exec in a session carrying a function, an alias and an option, median", ours: ms(median(stateful)), baseline: ms(median(isolatedAgain)), target: "≤ baseline + 0.5 ms", met: statefulOverhead <= 0.5 },
          { metric: "median overhead", ours: ms(statefulOverhead), baseline: "0.00 ms" },
        ],
      });
    } finally {
      await plain.close();
    }
    return tables;
  },
};

export default bench;
