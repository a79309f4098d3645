/**
 * A session's shell state beyond cwd and env: functions, aliases and shell options, as bash prints
 * them (`declare -f`, `alias -p`, `set +o`, `shopt -p`) and as a script that defines them again in
 * the next command. Options are kept only where they differ from what a fresh `bash -c` has, so a
 * session that changed none restores none (the common case costs nothing).
 *
 * Some options are not carried: those of an interactive shell with no meaning under `bash -c`
 * (history, job control, line editing), two that would stop the next command from running
 * (`noexec`, `onecmd`), and two bash refuses to set (`login_shell`, `restricted_shell`).
 * `expand_aliases` is always on, as in an interactive shell, so carried aliases are usable.
 */
import { execFile } from "node:child_process";
import { SHELL } from "../engine/spawn.ts";

/** `set:NAME` (a `set -o` option) or `shopt:NAME` → on. */
export type ShellOptions = Map<string, boolean>;

/** Options a command changed: key → its value now, and whether that value is bash's default. */
export type ShellOptionChanges = Map<string, { on: boolean; isDefault: boolean }>;

const NOT_CARRIED = new Set([
  "set:history",
  "set:monitor",
  "set:emacs",
  "set:vi",
  "set:noexec",
  "set:onecmd",
  "shopt:login_shell",
  "shopt:restricted_shell",
  "shopt:expand_aliases",
]);

/** Reads `set +o` and `shopt -p` output (`set -o NAME`, `set +o NAME`, `shopt -s NAME`, `shopt -u NAME`). */
export function parseOptions(text: string): ShellOptions {
  const options: ShellOptions = new Map();
  for (const line of text.split("\n")) {
    const match = /^(set|shopt) ([-+]o|-s|-u) ([A-Za-z0-9_-]+)$/.exec(line.trim());
    if (!match) continue;
    const key = `${match[1]}:${match[3]}`;
    if (!NOT_CARRIED.has(key)) options.set(key, match[2] === "-o" || match[2] === "-s");
  }
  return options;
}

/** `set -o NAME`, `set +o NAME`, `shopt -s NAME`, `shopt -u NAME`. */
export function optionCommand(key: string, on: boolean): string {
  const [kind, name] = key.split(":", 2) as [string, string];
  return kind === "set" ? `set ${on ? "-" : "+"}o ${name}` : `shopt ${on ? "-s" : "-u"} ${name}`;
}

/**
 * The script a command evaluates before its own text: functions first (so their bodies, already
 * alias-expanded when they were defined, are not expanded again), then aliases, then options last
 * (so `errexit` or `nounset` cannot trip the restore itself).
 */
export function restoreScript(functions: string, aliases: string, options: ShellOptions): string {
  const parts = [functions, aliases, ...[...options].map(([key, on]) => `builtin ${optionCommand(key, on)}`)].filter((part) => part !== "");
  return parts.join("\n");
}

/** The options that are on, from `$SHELLOPTS` and `$BASHOPTS` (colon-separated names). */
export function enabledOptions(shellopts: string, bashopts: string): Set<string> {
  const names = (text: string, kind: string) => (text === "" ? [] : text.split(":").map((name) => `${kind}:${name}`));
  return new Set([...names(shellopts, "set"), ...names(bashopts, "shopt")]);
}

/**
 * The options a command left that differ from those it started with. Every option bash has is in
 * `before` (its defaults overlaid with the session's); one not in `enabled` was off at the end.
 */
export function changedOptions(before: ShellOptions, enabled: ReadonlySet<string>, defaults: ShellOptions): ShellOptionChanges {
  const changes: ShellOptionChanges = new Map();
  for (const [key, was] of before) {
    const on = enabled.has(key);
    if (on !== was) changes.set(key, { on, isDefault: defaults.get(key) === on });
  }
  return changes;
}

/** bash's own defaults overlaid with a session's options: what its commands start with. */
export function effectiveOptions(defaults: ShellOptions, session: ReadonlyMap<string, boolean>): ShellOptions {
  const options = new Map(defaults);
  for (const [key, on] of session) options.set(key, on);
  return options;
}

/** The names a session's functions and aliases define, for its description. */
export function definedNames(functions: string, aliases: string): { functions: string[]; aliases: string[] } {
  const names = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((match) => match[1]!);
  return { functions: names(functions, /^(\S+) \(\) $/gm), aliases: names(aliases, /^alias (?:-- )?([^=\s]+)=/gm) };
}

let defaults: Promise<ShellOptions> | undefined;

/** The options of a fresh `bash -c` (with `expand_aliases`, which every session command gets): asked of bash once. */
export function bashDefaultOptions(): Promise<ShellOptions> {
  defaults ??= new Promise((resolve) => {
    execFile(SHELL, ["-c", "shopt -s expand_aliases; set +o; shopt -p"], { env: {} }, (error, stdout) => {
      resolve(error ? new Map() : parseOptions(stdout));
    });
  });
  return defaults;
}
