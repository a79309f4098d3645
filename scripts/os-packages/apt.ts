/**
 * Installs Debian packages with apt-get: one update, then one install without recommends. apt's own
 * output is kept, and shown only when it fails.
 */
import { spawnSync } from "node:child_process";
import { installArgs } from "./decide.ts";

export interface AptResult {
  ok: boolean;
  /** The end of apt's output when it failed. */
  output: string;
}

function aptGet(args: string[]): { ok: boolean; output: string } {
  const result = spawnSync("apt-get", args, {
    encoding: "utf8",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? String(result.error) : ""}`;
  return { ok: result.status === 0, output };
}

export function aptInstall(packages: readonly string[]): AptResult {
  for (const args of [["update", "-qq"], installArgs(packages)]) {
    const step = aptGet(args);
    if (!step.ok) return { ok: false, output: step.output.trim().split("\n").slice(-15).join("\n") };
  }
  return { ok: true, output: "" };
}
