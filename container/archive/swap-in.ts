/**
 * The second half of an all-or-nothing restore: a fully extracted tree is moved into the workspace
 * by renames, one entry at a time, through directory handles (a command racing links cannot turn
 * a rename elsewhere). A folder present on both sides is merged; anything else is replaced whole:
 * the old entry is first moved aside, into the staging folder removed afterwards. Paths to clear
 * are replaced whole, and what they held that the archive does not goes aside as well.
 */
import type { Stats } from "node:fs";
import { lstat, readdir, rename, rm } from "node:fs/promises";
import type { DirHandle } from "../files/dir-handle.ts";
import { toFileError } from "../files/errors.ts";
import { STAGING_PREFIX } from "./paths.ts";

interface Aside {
  dir: DirHandle;
  count: number;
}

const lstatOrUndefined = (path: string): Promise<Stats | undefined> => lstat(path).catch(() => undefined);

export async function swapIn(root: DirHandle, tree: DirHandle, old: DirHandle, clear: readonly string[]): Promise<void> {
  const aside: Aside = { dir: old, count: 0 };
  const cleared = new Set(clear.map((path) => path.replace(/^\.\/+/, "").replace(/\/+$/, "") || "."));
  const wholeWorkspace = cleared.has(".");
  const archived = new Set(await readdir(tree.self));
  // Decided before the tree is moved out: which cleared paths the archive does not hold.
  const missing: string[] = [];
  for (const path of cleared) if (path !== "." && !(await lstatOrUndefined(tree.at(path)))) missing.push(path);

  await merge(tree, root, "", wholeWorkspace ? new Set(archived) : cleared, aside);

  if (wholeWorkspace) {
    for (const name of await readdir(root.self)) {
      if (!archived.has(name) && !name.startsWith(STAGING_PREFIX)) await moveAside(root, name, aside);
    }
  }
  for (const path of missing) await clearAt(root, path, aside);
}

async function merge(from: DirHandle, into: DirHandle, prefix: string, wholes: ReadonlySet<string>, aside: Aside): Promise<void> {
  for (const name of await readdir(from.self)) {
    const relative = prefix === "" ? name : `${prefix}/${name}`;
    const staged = await lstat(from.at(name));
    const existing = await lstatOrUndefined(into.at(name));
    if (!wholes.has(relative) && staged.isDirectory() && existing?.isDirectory()) {
      const [source, target] = [await from.openChild(name), await into.openChild(name)];
      try {
        await merge(source, target, relative, wholes, aside);
      } finally {
        await Promise.all([source.close(), target.close()]);
      }
      continue;
    }
    if (existing) await moveAside(into, name, aside);
    await rename(from.at(name), into.at(name)).catch((error: unknown) => {
      throw toFileError(error, relative);
    });
  }
}

/** Moves the entry at a workspace-relative path aside, if it is there (walking real folders only). */
async function clearAt(root: DirHandle, path: string, aside: Aside): Promise<void> {
  const parts = path.split("/");
  const opened: DirHandle[] = [];
  try {
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      const child = await dir.openChild(part).catch(() => undefined);
      if (!child) return;
      opened.push(child);
      dir = child;
    }
    if (await lstatOrUndefined(dir.at(parts.at(-1)!))) await moveAside(dir, parts.at(-1)!, aside);
  } finally {
    await Promise.all(opened.map((dir) => dir.close()));
  }
}

async function moveAside(dir: DirHandle, name: string, aside: Aside): Promise<void> {
  const place = aside.dir.at(String(aside.count++));
  await rename(dir.at(name), place).catch(async (error: NodeJS.ErrnoException) => {
    // Another filesystem mounted inside the workspace: there is no moving aside, only removing.
    if (error.code === "EXDEV") await rm(dir.at(name), { recursive: true, force: true });
    else throw toFileError(error, name);
  });
}
