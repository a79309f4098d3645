/**
 * Finding programs: whether a path is an executable file, and the first one of a name in a list of
 * directories (a PATH split up). Synchronous on purpose: a few stats are cheaper than trips through
 * the thread pool, and callers look programs up just before spawning them.
 */
import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";

export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first executable file `name` in `dirs` (empty entries are skipped), or undefined. */
export function findExecutable(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}
