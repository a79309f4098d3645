/**
 * Finding the entry a caller's path names, by directory handles: from an allowed root, each
 * component is opened inside the last without following symlinks, and the operation then acts on a
 * name inside the last directory held open (dir-handle.ts). A symlink met on the way is read, its
 * target joined to the rest of the path, and the walk starts again from the root that target lies
 * in — so a symlink may lead anywhere inside the allowed roots, never outside (nor into the server's
 * own process: server-process.ts), and a command that
 * swaps directories for symlinks meanwhile cannot move the walk: every step was checked where it
 * was taken, and nothing is ever looked up again by a path string.
 */
import { readlinkSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ServiceError } from "../../server-kit/service-error.ts";
import { DirHandle } from "./dir-handle.ts";
import { toFileError } from "./errors.ts";
import type { Access, PathPolicy } from "./paths.ts";
import { isServerProcessEntry, serverProcessRefusal } from "./server-process.ts";

/** Symlinks followed in one lookup before giving up, as the kernel does (a loop). */
const MAX_SYMLINKS = 40;

export interface Entry {
  /** The directory holding the entry, held open: the operation acts on `dir.at(name)`. Close it after. */
  dir: DirHandle;
  /** The entry's name in `dir`: one component, or "." when the entry is a root itself. */
  name: string;
  /** The path as the caller gave it (for messages) and made absolute (what answers report). */
  input: string;
  display: string;
  /** The entry's real path as walked (for its extension and for messages; never acted on). */
  real: string;
  /** The entry is the workspace or a configured root (which may not be deleted or renamed). */
  isRoot: boolean;
  /** Parent directories were created on the way (`createParents`). */
  createdParents: boolean;
}

export interface LocateOptions {
  /** Follow a symlink in the last component (default true). False for operations on the entry itself. */
  followFinal?: boolean;
  /** Create missing parent directories instead of failing with FILE_NOT_FOUND. */
  createParents?: boolean;
  /** Mode of directories created on the way (less the umask). */
  parentMode?: number;
}

/** The entry `input` names, for `access`. Errors are ServiceErrors naming `input`. */
export async function locate(policy: PathPolicy, input: string, access: Access, options: LocateOptions = {}): Promise<Entry> {
  const display = policy.display(input);
  const followFinal = options.followFinal ?? true;
  let target = display;
  let createdParents = false;
  for (let links = 0; ; links++) {
    if (links > MAX_SYMLINKS) {
      throw new ServiceError("INVALID_REQUEST", `${input}: too many levels of symbolic links`, { path: input, errno: "ELOOP" });
    }
    const { root, components } = policy.start(target, access, input, links > 0);
    const name = components.pop() ?? ".";
    let dir = await DirHandle.openRoot(root).catch((error: unknown) => {
      throw toFileError(error, input);
    });
    try {
      let redirect: string | undefined;
      for (const [index, component] of components.entries()) {
        const step = await enter(dir, component, options);
        if (step.created) createdParents = true;
        if (step.link !== undefined) {
          redirect = path.resolve(dir.real, step.link, ...components.slice(index + 1), name);
          break;
        }
        await dir.close();
        dir = step.dir!;
      }
      if (redirect === undefined && followFinal && name !== ".") {
        const link = await linkText(dir, name);
        if (link !== undefined) redirect = path.resolve(dir.real, link);
      }
      if (redirect !== undefined) {
        await dir.close();
        target = redirect;
        continue;
      }
      // The entry itself may be the server's /proc directory (steps into it are refused by openChild).
      if (name !== "." && (await isServerProcessEntry(dir.self, name))) throw serverProcessRefusal(path.join(dir.real, name));
      const real = name === "." ? dir.real : path.join(dir.real, name);
      return { dir, name, input, display, real, isRoot: policy.isRoot(real), createdParents };
    } catch (error) {
      await dir.close();
      throw toFileError(error, input);
    }
  }
}

/** The entry's directory opened by itself (for listing it or moving into it). */
export async function openEntryDirectory(entry: Entry): Promise<DirHandle> {
  try {
    return await entry.dir.openChild(entry.name);
  } catch (error) {
    throw toFileError(error, entry.input);
  }
}

interface Step {
  dir?: DirHandle;
  /** The component is a symlink with this text. */
  link?: string;
  created?: boolean;
}

/** Opens the directory `name` inside `dir`, or reports the symlink standing there. */
async function enter(dir: DirHandle, name: string, options: LocateOptions): Promise<Step> {
  let created = false;
  for (let attempt = 0; ; attempt++) {
    try {
      return { dir: await dir.openChild(name), created };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR" || code === "ELOOP") {
        const link = await linkText(dir, name);
        if (link !== undefined) return { link, created };
        throw error;
      }
      if (code !== "ENOENT" || !options.createParents || attempt > 0) throw error;
      // Missing: make it, then open it like any other (whatever stands there by then is checked).
      await mkdir(dir.at(name), options.parentMode === undefined ? {} : { mode: options.parentMode }).then(
        () => (created = true),
        (mkdirError: NodeJS.ErrnoException) => {
          if (mkdirError.code !== "EEXIST") throw mkdirError;
        },
      );
    }
  }
}

/**
 * The text of the symlink `name` inside `dir`, or undefined when `name` is not a symlink (or missing).
 * On the event loop, like the walk's opens (dir-handle.ts): a lookup and a read of the link's text.
 */
async function linkText(dir: DirHandle, name: string): Promise<string | undefined> {
  try {
    return readlinkSync(dir.at(name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EINVAL" || code === "ENOENT") return undefined;
    throw error;
  }
}

/** The workspace and configured roots stay where they are: never deleted, moved or replaced. */
export function refuseRoot(entry: Entry, verb: string): void {
  if (entry.isRoot) {
    throw new ServiceError("PERMISSION_DENIED", `${entry.input}: cannot ${verb} the workspace or a configured root`, { path: entry.input });
  }
}
