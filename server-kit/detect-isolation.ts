/**
 * What isolation this machine offers. bubblewrap counts as available only when a trial sandbox with
 * the namespaces we use actually starts: an installed binary is not enough (containers often forbid
 * user or pid namespaces). Probed once per process and binary (about 10 ms), synchronously: a
 container server asks when it starts under bwrap (one without never does), a pooled one ahead of
 its sandbox, the local runtime when a caller asks what the machine offers.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import type { IsolationSupport } from "../protocol/isolation.ts";
import { findExecutable, isExecutableFile } from "./executables.ts";

const cached = new Map<string, IsolationSupport>();

/**
 * `bwrapPath` names the bubblewrap to probe (default SANDBOX_BWRAP_PATH, else `bwrap` on PATH), so a
 * caller that starts servers with a given SANDBOX_BWRAP_PATH can ask what they will find.
 */
export function detectIsolation(options: { refresh?: boolean; bwrapPath?: string } = {}): IsolationSupport {
  const wanted = options.bwrapPath || process.env.SANDBOX_BWRAP_PATH || "bwrap";
  let support = cached.get(wanted);
  if (!support || options.refresh) {
    support = { none: { available: true }, bwrap: probeBwrap(wanted) };
    cached.set(wanted, support);
  }
  return support;
}

function probeBwrap(wanted: string): IsolationSupport["bwrap"] {
  const binary = findBinary(wanted);
  if (!binary) return { available: false, reason: "bwrap (bubblewrap) is not installed: apt-get install bubblewrap" };
  const version = run(binary, ["--version"]);
  if (!version.ok) return { available: false, path: binary, reason: `bwrap --version failed: ${version.output}` };
  const versionText = version.output.trim().replace(/^bubblewrap\s+/i, "");
  const trial = run(binary, [
    "--ro-bind", "/", "/",
    "--proc", "/proc",
    "--dev", "/dev",
    "--unshare-user", "--uid", "1000", "--gid", "1000",
    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
    "--die-with-parent", "--cap-drop", "ALL",
    "--", "/bin/sh", "-c", "exit 0",
  ]);
  if (!trial.ok) {
    return { available: false, path: binary, version: versionText, reason: `bwrap cannot create namespaces here: ${trial.output.trim()}` };
  }
  return { available: true, path: binary, version: versionText };
}

/** A path as given, else the name in PATH, /usr/bin or /bin. */
function findBinary(name: string): string | undefined {
  if (name.includes("/")) return isExecutableFile(name) ? name : undefined;
  return findExecutable(name, [...(process.env.PATH || "").split(path.delimiter), "/usr/bin", "/bin"]);
}

function run(file: string, args: string[]): { ok: boolean; output: string } {
  const result = spawnSync(file, args, { timeout: 5000, encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}` || (result.error?.message ?? "");
  return { ok: result.status === 0, output };
}
