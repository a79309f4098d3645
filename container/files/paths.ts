/**
 * Which paths a file operation may touch. A caller's path is resolved lexically against the
 * workspace and must lie inside the workspace or a configured extra root (read-write or read-only).
 * The policy only decides where a walk starts and whether it is allowed: the walk itself, which
 * follows symlinks one verified step at a time, is locate.ts. `..`, absolute paths elsewhere and
 * symlinks that lead out all end as PATH_OUTSIDE_WORKSPACE.
 */
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

/** Where the walk to a path starts: an allowed root (by its real path) and the components below it. */
export interface WalkStart {
  root: string;
  components: string[];
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

  /** The caller's path made absolute against the workspace: what answers report. */
  display(input: string): string {
    return path.resolve(this.workspace, input);
  }

  /**
   * Where to walk from to reach `target` (absolute, lexically normalised) for `access`, or
   * PATH_OUTSIDE_WORKSPACE. `viaSymlink` says the target came from a symlink's text (for the message).
   */
  start(target: string, access: Access, input: string, viaSymlink: boolean): WalkStart {
    const root = this.#rootOf(target);
    if (!root) {
      throw outside(input, viaSymlink ? "it resolves (through a symbolic link) to a place outside the workspace" : "it is not inside the workspace");
    }
    if (access === "write" && !root.writable) {
      throw new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: the path is read-only for this sandbox`, { path: input });
    }
    const base = isInside(target, root.given) ? root.given : root.real;
    return { root: root.real, components: path.relative(base, target).split(path.sep).filter((c) => c !== "") };
  }

  /** True when `real` (a walked, real path) is one of the roots, which may not be deleted or renamed. */
  isRoot(real: string): boolean {
    return this.#roots.some((r) => r.real === real);
  }

  /** The most permissive root containing `p` (writable roots first, so a rw path inside a ro one stays writable). */
  #rootOf(p: string): Root | undefined {
    const containing = this.#roots.filter((r) => isInside(p, r.given) || isInside(p, r.real));
    return containing.find((r) => r.writable) ?? containing[0];
  }
}

export function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(prefix);
}

function outside(input: string, why: string): ServiceError {
  return new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: access denied, ${why}`, { path: input });
}
