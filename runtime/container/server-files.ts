/**
 * The container server's own files (this checkout's Node and the server's bundle, which holds
 * everything the server runs: container/boot/bundle.ts), where a container's unprivileged user can
 * reach them. bwrap finds what it binds by path as that user, so a checkout under a folder closed to
 * others (root's 0700 home) would leave every container without its server. There, the files are
 * staged once (per bundle and Node version) under the system's temporary folder, in a folder of the
 * runtime's user that others may read but not change; a checkout others can reach is used as it is.
 */
import { chmodSync, cpSync, existsSync, linkSync, copyFileSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { BUNDLE_ENTRY } from "../../server-kit/bundle-layout.ts";
import { closedAncestor } from "./reachable.ts";

export interface ServerFiles {
  /** Node, bound as the container's /usr/local/bin/node. */
  node: string;
  /** The server's bundle: what is in it is bound under the container's /app, as the image lays it out. */
  bundle: string;
}

/** Where a checkout's files are staged when they must be. */
export const STAGE_ROOT = join(tmpdir(), "edge-sandbox-server");

/**
 * The server's files for containers: the checkout's own when others can reach them, else (or when
 * `force`d) a staged copy under `stageRoot`.
 */
export function serverFiles(files: ServerFiles, options: { force?: boolean; stageRoot?: string } = {}): ServerFiles {
  const reachable = closedAncestor(files.node) === undefined && closedAncestor(join(files.bundle, BUNDLE_ENTRY)) === undefined;
  if (reachable && !options.force) return files;
  return stage(files, options.stageRoot ?? STAGE_ROOT);
}

/** The binds that lay the bundle out as the image's /app: each of its entries, under /app. */
export function appBinds(bundle: string): Record<string, string> {
  return Object.fromEntries(readdirSync(bundle).map((name) => [name, join(bundle, name)]));
}

function stage(files: ServerFiles, root: string): ServerFiles {
  ensureOwnFolder(root);
  const target = join(root, `${basename(files.bundle)}-${process.version}`);
  const staged: ServerFiles = { node: join(target, "node"), bundle: join(target, "app") };
  if (existsSync(join(staged.bundle, BUNDLE_ENTRY))) return staged;
  const building = `${target}.tmp-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true, mode: 0o755 });
  try {
    linkSync(files.node, join(building, "node"));
  } catch {
    copyFileSync(files.node, join(building, "node")); // another file system
  }
  chmodSync(join(building, "node"), 0o755);
  cpSync(files.bundle, join(building, "app"), { recursive: true, dereference: false });
  try {
    renameSync(building, target);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(staged.bundle, BUNDLE_ENTRY))) throw error; // another runtime staged the same files first: use theirs
  }
  return staged;
}

/** The staging folder is this user's and open to read only: a folder someone else made there is refused. */
function ensureOwnFolder(root: string): void {
  mkdirSync(root, { recursive: true, mode: 0o755 });
  const stats = lstatSync(root);
  if (!stats.isDirectory() || stats.uid !== process.getuid?.()) {
    throw new Error(`${root} is not a folder of this user: the container server's files cannot be staged there`);
  }
  chmodSync(root, 0o755);
}
