/**
 * One runtime per data folder. A runtime reaps what an earlier runtime of its folder left running, so
 * a second one started on a folder in use would stop the first one's sandboxes mid-work. The folder's
 * lock names the runtime holding it; a second start on it refuses in one line instead.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../server-kit/process-alive.ts";

const LOCK_FILE = "runtime.pid";

/** Takes the folder for this process, or throws naming the runtime that has it. Returns the release. */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => {
        if (holder(file) === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = holder(file);
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) {
        throw new Error(`another runtime (pid ${pid}) uses ${dataDir}: stop it, or give this one its own folder (SANDBOX_DATA_DIR)`);
      }
      rmSync(file, { force: true }); // its runtime is gone: the folder is free
    }
  }
  throw new Error(`could not take ${file}`);
}

function holder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
