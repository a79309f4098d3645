/**
 * What an archive leaves out by pattern, as one test of a path relative to the archived folder: the
 * backups of Cloudflare's Sandbox SDK (their container's backup route) and our own archives and
 * backups (`excludes`, `gitignore`) share it. `excludes` are wildcard patterns (`node_modules`,
 * `*.log`, `.cache/tmp`): `*` and `?` stay within one path component, `[…]` is a class. A pattern without `/` names an entry at any
 * depth, as their examples read; one with `/` is matched against the whole relative path. With
 * `gitignore`, what git itself ignores in the folder is left out too (untracked ignored files and
 * folders, as `git ls-files` lists them); a folder outside a repository, or no git, leaves nothing
 * out, as theirs does.
 */
import { execFile } from "node:child_process";

/** Longest listing of ignored paths read from git; a larger one is a mistake, not a workspace. */
const MAX_GIT_LISTING_BYTES = 64 * 1024 * 1024;

/** A wildcard pattern as a regular expression over a slash-separated path. */
function patternRegex(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else if (char === "[" && pattern.indexOf("]", i + 2) > i) {
      const end = pattern.indexOf("]", i + 2);
      const body = pattern.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      source += `[${body}]`;
      i = end;
    } else source += char.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** True for a relative path one of the patterns names. */
export function wildcardExcluder(patterns: readonly string[]): (relative: string) => boolean {
  const anywhere = patterns.filter((p) => !p.replace(/\/+$/, "").includes("/")).map((p) => patternRegex(p.replace(/\/+$/, "")));
  const anchored = patterns.filter((p) => p.replace(/\/+$/, "").includes("/")).map((p) => patternRegex(p.replace(/^\.?\/+/, "").replace(/\/+$/, "")));
  return (relative) => {
    const name = relative.slice(relative.lastIndexOf("/") + 1);
    return anywhere.some((re) => re.test(name)) || anchored.some((re) => re.test(relative));
  };
}

/** The paths (relative to `folder`, folders without their trailing `/`) git ignores there; none outside a repository. */
export function gitIgnoredPaths(folder: string): Promise<Set<string>> {
  const args = ["-C", folder, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"];
  return new Promise((resolve) => {
    execFile("git", args, { maxBuffer: MAX_GIT_LISTING_BYTES, encoding: "utf8" }, (error, stdout) => {
      if (error) return resolve(new Set());
      resolve(new Set(stdout.split("\0").filter((p) => p !== "").map((p) => p.replace(/\/+$/, ""))));
    });
  });
}

/** One test for the whole archive: a wildcard pattern or git leaves the path out. */
export async function leaveOutTest(folder: string, options: { excludes: readonly string[]; gitignore: boolean }): Promise<(relative: string) => boolean> {
  const wildcard = wildcardExcluder(options.excludes);
  const ignored = options.gitignore ? await gitIgnoredPaths(folder) : new Set<string>();
  return (relative) => wildcard(relative) || ignored.has(relative);
}
