/**
 * Carrying a command's shell state out of it, without a long-lived shell: the command runs as
 * `bash -c '<prelude><command>'`, where the one-line prelude turns on `expand_aliases`, installs an
 * EXIT trap, and defines the session's functions, aliases and options (when it has any). The trap
 * writes `$PWD`, `export -p`, `declare -f`, `alias -p` and the options that are on (`$SHELLOPTS`,
 * `$BASHOPTS`) to a per-run state file: builtins writing into one redirection, no process started. It runs on `exit N`, on a
 * `set -e` failure and at the normal end; a killed command writes nothing (or a file without the end
 * marker), which leaves the session as it was. The command text itself is not rewritten or quoted:
 * heredocs, `$0`, `$#` and syntax errors behave exactly as under a plain `bash -c`.
 *
 * The session's functions, aliases and options reach the command in one environment variable
 * (SHELL_STATE_VAR), which the prelude evaluates and unsets before the command's first line runs: no
 * file to write per command, and `$LINENO` stays off by one at most.
 *
 * Known limits: a command that sets its own EXIT trap, or that `exec`s another program, replaces
 * ours and leaves the session unchanged. Every word of the prelude and trap is `\builtin`, so
 * aliases (and functions named printf or export) of the session do not reach into them.
 */
import { readFileSync } from "node:fs";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { parseExportList } from "./export-list.ts";
import { changedOptions, enabledOptions, type ShellOptions } from "./shell-state.ts";
import type { SessionChanges } from "./store.ts";

const MAGIC = "sandbox-state-v2";
const END = "end";

/** Carries a session's functions, aliases and options into a command; never seen by the command itself. */
export const SHELL_STATE_VAR = "__SANDBOX_SESSION_SHELL";

/** Variables bash maintains itself, the server's run tag and our own: never carried into a session. */
const SHELL_MAINTAINED = new Set(["PWD", "OLDPWD", "SHLVL", "_", RUN_TAG_VAR, SHELL_STATE_VAR]);

/**
 * The one-line prelude. The state file is `MAGIC\0cwd\0<export -p>\0<declare -f>\0<alias -p>\0
 * <SHELLOPTS>\0<BASHOPTS>\0end\0`: bash strings cannot hold NUL, so the fields cannot blur. The trap's output and
 * any `set -x` trace of it go nowhere, and `|| true` keeps a failed write (full disk) from changing
 * the command's exit status under `set -e`.
 */
export function capturePrelude(stateFile: string, restores: boolean): string {
  const file = shellQuote(stateFile);
  const sep = "\\builtin printf '\\0';";
  const save =
    `{ \\builtin printf '%s\\0' ${MAGIC} "\${PWD:-$(pwd)}"; \\builtin export -p; ${sep} \\builtin declare -f; ${sep} ` +
    `\\builtin alias -p; ${sep} \\builtin printf '%s\\0' "$SHELLOPTS" "$BASHOPTS" ${END}; } >| ${file} 2>/dev/null || \\builtin true`;
  return (
    `\\builtin shopt -s expand_aliases; \\builtin trap ${shellQuote(save)} EXIT;` +
    (restores ? ` \\builtin eval "$${SHELL_STATE_VAR}";` : "") +
    "\n"
  );
}

/** What the prelude evaluates: unset our variable first, then the session's own script. */
export function shellStateValue(restore: string): string {
  return `\\builtin unset -v ${SHELL_STATE_VAR}\n${restore}`;
}

export interface CapturedState {
  cwd: string;
  env: Record<string, string>;
  functions: string;
  aliases: string;
  /** The options that were on (`set:NAME`, `shopt:NAME`); every other option was off. */
  enabledOptions: Set<string>;
}

/**
 * Reads a state file; undefined when it is missing or incomplete (the command did not end normally).
 * Synchronous on purpose: a few KiB from the page cache cost less than a trip through the thread pool.
 */
export function readCapturedState(stateFile: string): CapturedState | undefined {
  let text: string;
  try {
    text = readFileSync(stateFile, "utf8");
  } catch {
    return undefined;
  }
  const fields = text.split("\0");
  if (fields.length !== 9 || fields[0] !== MAGIC || fields[7] !== END || fields[8] !== "") return undefined;
  try {
    return {
      cwd: fields[1]!,
      env: parseExportList(fields[2]!),
      functions: fields[3]!,
      aliases: fields[4]!,
      enabledOptions: enabledOptions(fields[5]!, fields[6]!),
    };
  } catch {
    return undefined;
  }
}

/** What a command started with: the session's state as it was given to it. */
export interface StartState {
  cwd: string;
  env: Readonly<Record<string, string>>;
  functions: string;
  aliases: string;
  /** The options it started with (bash's defaults overlaid with the session's); undefined: options are not carried. */
  options: ShellOptions | undefined;
  defaults: ShellOptions;
}

/** What the command changed: keys it set to a new value, keys it removed, a cwd it moved to, functions, aliases, options. */
export function diffState(before: StartState, after: CapturedState): SessionChanges {
  const set: Record<string, string> = {};
  const unset: string[] = [];
  for (const [name, value] of Object.entries(after.env)) {
    if (SHELL_MAINTAINED.has(name)) continue;
    if (before.env[name] !== value) set[name] = value;
  }
  for (const name of Object.keys(before.env)) {
    if (!SHELL_MAINTAINED.has(name) && !(name in after.env)) unset.push(name);
  }
  const options = before.options === undefined ? undefined : changedOptions(before.options, after.enabledOptions, before.defaults);
  return {
    ...(after.cwd !== before.cwd ? { cwd: after.cwd } : {}),
    set,
    unset,
    ...(after.functions !== before.functions ? { functions: after.functions } : {}),
    ...(after.aliases !== before.aliases ? { aliases: after.aliases } : {}),
    ...(options !== undefined && options.size > 0 ? { options } : {}),
  };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
