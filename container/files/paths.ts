/**
 * Which paths a file operation may touch. A caller's path is resolved against the workspace, then
 * every symlink in the part that exists is resolved (realpath of the longest existing prefix), and the
 * result must lie inside the workspace or a configured extra root. `..`, absolute paths elsewhere and
 * symlinks that lead out all end as PATH_OUTSIDE_WORKSPACE.
 */
import { realpath, readlink } from "node:fs/promises";
import { realpathSync } from "node:fs";
import path from "node:path";
import { ServiceError } from "../../server-kit/service-error.ts";

export type Access = "read" | "write";

export interface PathPolicyOptions {
  /** The sandbox's workspace: relative paths start here. */
  workspace: string;
  /** Extra roots the sandbox may read and write. */
  readWritePaths?: readonly string[];
  /** Extra roots the sandbox may read. */
  readOnlyPaths?: readonly string[];
}

interface Root {
  /** As configured (absolute, normalised) and as the filesystem resolves it. */
  given: string;
  real: string;
  writable: boolean;
}

export interface ResolvedPath {
  /** Absolute path as the caller named it (lexically resolved): what responses report. */
  display: string;
  /** Absolute path with every existing symlink resolved: what the operation uses. */
  real: string;
  /** True when `real` is one of the roots itself (which may not be deleted or renamed). */
  isRoot: boolean;
}

export interface ResolveOptions {
  /** Resolve a symlink in the last component too (default true). False for operations on the entry itself. */
  followFinal?: boolean;
}

export class PathPolicy {
  readonly workspace: string;
  readonly #roots: Root[];

  constructor(options: PathPolicyOptions) {
    this.workspace = path.resolve(options.workspace);
    const root = (given: string, writable: boolean): Root => {
      const abs = path.resolve(given);
      let real = abs;
      try {
        real = realpathSync(abs);
      } catch {
        // A configured root that does not exist yet is matched lexically.
      }
      return { given: abs, real, writable };
    };
    this.#roots = [
      root(this.workspace, true),
      ...(options.readWritePaths ?? []).map((p) => root(p, true)),
      ...(options.readOnlyPaths ?? []).map((p) => root(p, false)),
    ];
  }

  /** Resolves a caller's path for `access`, or throws PATH_OUTSIDE_WORKSPACE. */
  async resolve(input: string, access: Access, options: ResolveOptions = {}): Promise<ResolvedPath> {
    const display = path.resolve(this.workspace, input);
    const lexicalRoot = this.#rootOf(display, "given");
    if (!lexicalRoot) throw outside(input, "it is not inside the workspace");
    const followFinal = options.followFinal ?? true;
    const real = followFinal
      ? await resolveExisting(display)
      : path.join(await resolveExisting(path.dirname(display)), path.basename(display));
    const root = this.#rootOf(real, "real");
    if (!root) throw outside(input, "it resolves (through a symbolic link) to a place outside the workspace");
    if (access === "write" && !root.writable) {
      throw new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: the path is read-only for this sandbox`, {
        path: input,
      });
    }
    return { display, real, isRoot: this.#roots.some((r) => r.real === real) };
  }

  /** True when an already-resolved real path (e.g. of an open descriptor) is allowed for `access`. */
  allows(realPath: string, access: Access): boolean {
    const root = this.#rootOf(realPath, "real");
    return root !== undefined && (access === "read" || root.writable);
  }

  /** The most permissive root containing `p` (writable roots first, so a rw path inside a ro one stays writable). */
  #rootOf(p: string, which: "given" | "real"): Root | undefined {
    const containing = this.#roots.filter((r) => isInside(p, r[which]) || (which === "given" && isInside(p, r.real)));
    return containing.find((r) => r.writable) ?? containing[0];
  }
}

export function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(prefix);
}

/** realpath of the longest existing prefix, with the missing rest appended (it holds no symlinks). */
async function resolveExisting(absolute: string): Promise<string> {
  const missing: string[] = [];
  let current = absolute;
  for (let links = 0; ; ) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : path.join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        // A dangling symlink: follow its text, which realpath refused to.
        const target = await readlink(current).catch(() => undefined);
        if (target !== undefined) {
          if (++links > 40) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
          current = path.resolve(path.dirname(current), target);
          continue;
        }
      } else if (code !== "ENOTDIR") throw error;
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

function outside(input: string, why: string): ServiceError {
  return new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: access denied, ${why}`, { path: input });
}
