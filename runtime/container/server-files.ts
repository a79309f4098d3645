/**
 * The container server's own files (this checkout's Node, its compiled tree and the packages it
 * imports), where a container's unprivileged user can reach them. bwrap finds what it binds by path
 * as that user, so a checkout under a folder closed to others (root's 0700 home) would leave every
 * container without its server. There, the files are staged once (per compiled tree and Node
 * version) under the system's temporary folder, in a folder of the runtime's user that others may
 * read but not change; a checkout others can reach is used as it is.
 */
import { chmodSync, cpSync, existsSync, linkSync, copyFileSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { closedAncestor } from "./reachable.ts";

export interface ServerFiles {
  /** Node, bound as the container's /usr/local/bin/node. */
  node: string;
  /** The node_modules bound as the container's /app/node_modules: the compiled tree is under its .cache. */
  modules: string;
  /** The compiled entry, below `modules`. */
  entry: string;
}

/** Where a checkout's files are staged when they must be. */
export const STAGE_ROOT = join(tmpdir(), "edge-sandbox-server");

/**
 * The server's files for containers: the checkout's own when others can reach them, else (or when
 * `force`d) a staged copy under `stageRoot`.
 */
export function serverFiles(files: ServerFiles, options: { force?: boolean; stageRoot?: string } = {}): ServerFiles {
  const reachable = closedAncestor(files.node) === undefined && closedAncestor(join(files.modules, "x")) === undefined;
  if (reachable && !options.force) return files;
  return stage(files, options.stageRoot ?? STAGE_ROOT);
}

function stage(files: ServerFiles, root: string): ServerFiles {
  ensureOwnFolder(root);
  const tree = relative(files.modules, dirname(dirname(files.entry))); // .cache/sandbox-container/<hash>
  const target = join(root, `${basename(tree)}-${process.version}`);
  const staged: ServerFiles = {
    node: join(target, "node"),
    modules: join(target, "node_modules"),
    entry: join(target, "node_modules", relative(files.modules, files.entry)),
  };
  if (existsSync(staged.entry)) return staged;
  const building = `${target}.tmp-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(join(building, "node_modules"), { recursive: true, mode: 0o755 });
  try {
    linkSync(files.node, join(building, "node"));
  } catch {
    copyFileSync(files.node, join(building, "node")); // another file system
  }
  chmodSync(join(building, "node"), 0o755);
  cpSync(join(files.modules, tree), join(building, "node_modules", tree), { recursive: true });
  for (const name of runtimePackages(files.modules)) {
    cpSync(join(files.modules, name), join(building, "node_modules", name), { recursive: true, dereference: false });
  }
  try {
    renameSync(building, target);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(staged.entry)) throw error; // another runtime staged the same files first: use theirs
  }
  return staged;
}

/** The project's runtime dependencies and theirs (as installed: npm hoists them to the top). */
export function runtimePackages(modules: string): string[] {
  const manifest = (dir: string) =>
    JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
  const wanted = Object.keys(manifest(dirname(modules)).dependencies ?? {});
  const found = new Set<string>();
  while (wanted.length > 0) {
    const name = wanted.pop()!;
    if (found.has(name) || !existsSync(join(modules, name, "package.json"))) continue; // an optional one not for this platform
    found.add(name);
    const own = manifest(join(modules, name));
    wanted.push(...Object.keys(own.dependencies ?? {}), ...Object.keys(own.optionalDependencies ?? {}));
  }
  return [...found].sort();
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
