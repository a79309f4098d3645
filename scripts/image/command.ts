/**
 * Runs the programs that build and open the image (mmdebstrap, buildah, npm, tar), failing with the
 * command line and its exit status, so a broken step names itself.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";

export interface RunOptions {
  /**
   * A file opened as the program's stdin (the Dockerfile, for a build that reads it from there). A file
   * rather than a pipe: Node's pipes are sockets, which `/dev/stdin` cannot be opened on.
   */
  stdinFile?: string;
  cwd?: string;
  /** Show the program's output as it runs (long steps: the base, the build). */
  show?: boolean;
}

/** Runs `program args…` to its end; returns its stdout (trimmed) unless it was shown. */
export function run(program: string, args: readonly string[], options: RunOptions = {}): string {
  const stdin = options.stdinFile === undefined ? "ignore" : openSync(options.stdinFile, "r");
  let result;
  try {
    result = spawnSync(program, args, {
      cwd: options.cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: [stdin, options.show ? "inherit" : "pipe", options.show ? "inherit" : "pipe"],
    });
  } finally {
    if (typeof stdin === "number") closeSync(stdin);
  }
  if (result.error) throw new Error(`${program}: ${result.error.message}`);
  if (result.status !== 0) {
    const detail = options.show ? "" : `\n${(result.stderr ?? "").trim()}`;
    throw new Error(`${program} ${args.join(" ")} exited with ${result.status ?? result.signal}${detail}`);
  }
  return (result.stdout ?? "").trim();
}

/** Whether `program args…` succeeds (a lookup that may answer no). */
export function succeeds(program: string, args: readonly string[]): boolean {
  return spawnSync(program, args, { stdio: "ignore" }).status === 0;
}
