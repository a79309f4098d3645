/** Shared pieces for benchmarks: a server in its own process, HTTP keep-alive calls, stats, formatting. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("../container/main.ts", import.meta.url));

export interface ServerProcess {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** The container server as its own process (as in production), on a free port with a temp workspace. */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const workspace = mkdtempSync(join(tmpdir(), "sandbox-bench-"));
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", WORKSPACE: workspace, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited early (${code})`)));
  });
  return {
    url,
    pid: child.pid!,
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a process, in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb * 1024;
}

export const keepAliveAgent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * POST JSON over the keep-alive agent; resolves with the parsed body. The body is encoded once, to
 * bytes whose length is the content-length (a string would be measured, then encoded again to send).
 */
export function postJson<T = any>(url: string, path: string, body: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const req = request(
      url + path,
      { method: "POST", agent: keepAliveAgent, headers: { "content-type": "application/json", "content-length": payload.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as T);
          } catch (error) {
            reject(error);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (samples: number[]) => percentile(samples, 50);

export function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

export function mbPerSecond(bytes: number, millis: number): number {
  return bytes / 1e6 / (millis / 1000);
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
