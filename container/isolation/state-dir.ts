/**
 * The server's private state directory (per-run session files; under bwrap the sandbox's /tmp and
 * HOME). By default a temporary directory named after the server's pid: a server that is killed
 * outright (SIGKILL) cannot remove its own, so every server start sweeps those whose pid is gone.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isAlive } from "../../server-kit/process-alive.ts";

const PREFIX = "sandbox-state-";
const OWNED = new RegExp(`^${PREFIX}(\\d+)-[A-Za-z0-9]{6}$`);

export function createStateDir(): string {
  sweepStaleStateDirs();
  return mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
}

/** Removes state directories left by servers that no longer run. Best effort: errors are ignored. */
export function sweepStaleStateDirs(): void {
  let names: string[];
  try {
    names = readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(OWNED.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}
