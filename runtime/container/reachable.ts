/**
 * A root runtime's containers run as unprivileged host users, and bwrap finds what it binds by path
 * as that user: the data folder, this checkout's Node and its node_modules must be reachable by
 * others (execute permission on every folder above them). Checked once at start, so a checkout under
 * root's private home fails in one clear line instead of at the first sandbox.
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";

/** The first folder from `/` down to `path`'s parent that others cannot pass through, if any. */
export function closedAncestor(path: string): string | undefined {
  const chain: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  return chain.find((dir) => (statSync(dir).mode & 0o001) === 0);
}

/** Throws naming the folder to open and how, when a container's user could not reach one of `paths`. */
export function assertReachable(paths: readonly string[]): void {
  for (const path of paths) {
    const closed = closedAncestor(path);
    if (closed) {
      throw new Error(
        `sandbox containers run as unprivileged users and cannot reach ${path}: ${closed} is closed to others ` +
          `(chmod o+x ${closed}, or keep the checkout and SANDBOX_DATA_DIR where others may pass)`,
      );
    }
  }
}
