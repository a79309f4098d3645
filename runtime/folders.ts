/**
 * Folders the stack makes for itself, each with the mode it needs. A root runtime's containers run
 * as other host users, who must pass through every folder above their own: the parents made on the
 * way to a folder are 0711 (others may pass, never list), whatever the folder itself is. A plain
 * recursive mkdir would give every parent the folder's own mode, and a private folder (0700) would
 * close the way to it for the very sandboxes it is made for.
 */
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** What a parent the stack makes is: passed through by containers' users, listed by no one but its owner. */
export const PASS_THROUGH_MODE = 0o711;

/** Makes the missing parents of `path`, each 0711; folders already there are left as they are. */
export function makeParents(path: string): void {
  const missing: string[] = [];
  for (let dir = dirname(resolve(path)); !existsSync(dir); dir = dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    mkdirSync(dir, { mode: PASS_THROUGH_MODE });
    chmodSync(dir, PASS_THROUGH_MODE); // the umask may have taken bits off
  }
}

/** Makes `path` with `mode` (when it is missing), and its missing parents passable (makeParents). */
export function makeFolder(path: string, mode: number): void {
  makeParents(path);
  mkdirSync(path, { recursive: true, mode });
}
