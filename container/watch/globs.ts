/**
 * Which entries a watch (or a change digest) covers, from the caller's `include` and `exclude`
 * globs. A glob matches a relative path when it matches one or more whole components of it, so
 * `node_modules` matches `node_modules`, `a/node_modules` and everything below them, and `*.ts`
 * matches `src/app.ts`. `*` and `?` stay within a component, `**` crosses them.
 *
 * An excluded directory is not entered at all (no watch, no walk); `include` only decides which
 * entries are reported, directories are still entered to find matching files in them.
 */
import { WATCH_LIMITS, type WatchRequest } from "../../protocol/watch.ts";

export interface PathFilter {
  /** Leave this entry (and, for a directory, all below it) out. */
  excludes(relativePath: string): boolean;
  /** Report this entry (it is not excluded and matches `include`, if any). */
  reports(relativePath: string): boolean;
}

function globSource(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === "*" && glob[i + 1] === "*" && glob[i + 2] === "/") {
      out += "(?:.*/)?"; // `**/`: any number of directories, none included
      i += 2;
    } else if (char === "*" && glob[i + 1] === "*") {
      out += ".*";
      i++;
    } else if (char === "*") out += "[^/]*";
    else if (char === "?") out += "[^/]";
    else out += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return out;
}

function anyOf(globs: readonly string[]): RegExp | undefined {
  if (globs.length === 0) return undefined;
  return new RegExp(globs.map((glob) => `(?:^|/)${globSource(glob.replace(/^\/+|\/+$/g, ""))}(?:/|$)`).join("|"));
}

export function pathFilter(request: Pick<WatchRequest, "include" | "exclude">): PathFilter {
  const include = anyOf(request.include ?? []);
  const exclude = anyOf(request.exclude ?? (request.include === undefined ? WATCH_LIMITS.defaultExclude : []));
  const excludes = (relativePath: string) => exclude?.test(relativePath) ?? false;
  return {
    excludes,
    reports: (relativePath) => !excludes(relativePath) && (include?.test(relativePath) ?? true),
  };
}
