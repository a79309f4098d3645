/**
 * Which paths a file operation may touch. A caller's path is resolved lexically against the
 * workspace (relative paths start there; `/workspace` names the workspace wherever its folder is, as
 * it does in a container). Where the server is the sandbox (its container, or no isolation: the
 * server runs with exactly its commands' privileges and sees their tree), an absolute path may name
 * anything in the sandbox: the kernel refuses what the sandbox may not touch, and the one place
 * refused here is the server's own process (server-process.ts). Where the server sits outside the
 * walls its commands run in (bwrap per command), it keeps to what they see read-write at the same
 * path: the workspace and the configured extra roots; anything else is PATH_OUTSIDE_WORKSPACE.
 * The policy only decides where a walk starts and whether it is allowed: the walk itself, which
 * follows symlinks one verified step at a time, is locate.ts.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { ServiceError } from "../../server-kit/service-error.ts";

export type Access = "read" | "write";

/**
 * Where absolute paths may lead: `anywhere` in the sandbox (the server is the sandbox), or only the
 * workspace and configured `roots` (the server is outside its commands' walls).
 */
export type PathReach = "anywhere" | "roots";

/** What code written for the container names the workspace by. */
export const CONTAINER_WORKSPACE = "/workspace";

export interface PathPolicyOptions {
  /** The sandbox's workspace: relative paths start here. */
  workspace: string;
  /** Default "roots". */
  reach?: PathReach;
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
  readonly reach: PathReach;
  readonly #roots: Root[];
  /** The file system's root, for paths no configured root holds (reach "anywhere"). */
  readonly #anywhere: Root | undefined;

  constructor(options: PathPolicyOptions) {
    this.workspace = path.resolve(options.workspace);
    this.reach = options.reach ?? "roots";
    this.#anywhere = this.reach === "anywhere" ? { given: "/", real: "/", writable: true } : undefined;
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

  /** The caller's path made absolute against the workspace (`/workspace` naming it): what answers report. */
  display(input: string): string {
    const absolute = path.resolve(this.workspace, input);
    if (this.workspace === CONTAINER_WORKSPACE || !isInside(absolute, CONTAINER_WORKSPACE)) return absolute;
    return path.join(this.workspace, path.relative(CONTAINER_WORKSPACE, absolute));
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
      // Where the server is the sandbox, a read-only path is the sandbox's own, just not writable.
      const code = this.#anywhere ? "PERMISSION_DENIED" : "PATH_OUTSIDE_WORKSPACE";
      throw new ServiceError(code, `${input}: the path is read-only for this sandbox`, { path: input });
    }
    const base = isInside(target, root.given) ? root.given : root.real;
    return { root: root.real, components: path.relative(base, target).split(path.sep).filter((c) => c !== "") };
  }

  /** True when `real` (a walked, real path) is one of the roots, which may not be deleted or renamed. */
  isRoot(real: string): boolean {
    return this.#roots.some((r) => r.real === real) || (this.#anywhere !== undefined && real === "/");
  }

  /**
   * The most permissive configured root containing `p` (writable roots first, so a rw path inside a
   * ro one stays writable, as their mounts are), else the file system's root where reach is anywhere.
   */
  #rootOf(p: string): Root | undefined {
    const containing = this.#roots.filter((r) => isInside(p, r.given) || isInside(p, r.real));
    return containing.find((r) => r.writable) ?? containing[0] ?? this.#anywhere;
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
