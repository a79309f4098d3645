/**
 * Carrying a command's cwd and exported env out of it, without a long-lived shell: the command runs
 * as `bash -c '<prelude><command>'`, where the prelude installs an EXIT trap that writes `$PWD` and
 * `export -p` to a per-run state file. The trap runs on `exit N`, on a `set -e` failure and at the
 * normal end; a killed command writes nothing (or a file without the end marker), which leaves the
 * session as it was. The command text itself is not rewritten or quoted:
 * heredocs, `$0`, `$#` and syntax errors behave exactly as under a plain `bash -c`.
 *
 * Known limits: a command that sets its own EXIT trap, or that `exec`s another program, replaces
 * ours and leaves the session unchanged. (`builtin` keeps functions named printf/export out of it.)
 */
import { readFile } from "node:fs/promises";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { parseExportList } from "./export-list.ts";
import type { SessionChanges } from "./store.ts";

const MAGIC = "sandbox-state-v1";
const END = "end";

/** Variables bash maintains itself, and the server's run tag: never carried into a session. */
const SHELL_MAINTAINED = new Set(["PWD", "OLDPWD", "SHLVL", "_", RUN_TAG_VAR]);

/**
 * The one-line prelude (one line, so `$LINENO` in the command is off by one at most). The state file
 * is `MAGIC\0cwd\0<export -p>\0end\0`: bash strings cannot hold NUL, so the fields cannot blur.
 */
export function capturePrelude(stateFile: string): string {
  const file = shellQuote(stateFile);
  return (
    "__sandbox_save_state() { local __rc=$?; set +eu; " +
    `{ builtin printf '%s\\0' ${MAGIC} "\${PWD:-$(pwd)}"; builtin export -p; builtin printf '\\0${END}\\0'; } >| ${file} 2>/dev/null; ` +
    "return $__rc; }; trap '__sandbox_save_state 2>/dev/null' EXIT\n"
  );
}

export interface CapturedState {
  cwd: string;
  env: Record<string, string>;
}

/** Reads a state file; undefined when it is missing or incomplete (the command did not end normally). */
export async function readCapturedState(stateFile: string): Promise<CapturedState | undefined> {
  const text = await readFile(stateFile, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const trailer = `\0${END}\0`;
  const fields = text.split("\0", 2);
  if (fields[0] !== MAGIC || fields.length < 2 || !text.endsWith(trailer)) return undefined;
  const headerLength = MAGIC.length + 1 + fields[1]!.length + 1;
  try {
    return { cwd: fields[1]!, env: parseExportList(text.slice(headerLength, text.length - trailer.length)) };
  } catch {
    return undefined;
  }
}

/** What the command changed: keys it set to a new value, keys it removed, a cwd it moved to. */
export function diffState(
  before: { cwd: string; env: Readonly<Record<string, string>> },
  after: CapturedState,
): SessionChanges {
  const set: Record<string, string> = {};
  const unset: string[] = [];
  for (const [name, value] of Object.entries(after.env)) {
    if (SHELL_MAINTAINED.has(name)) continue;
    if (before.env[name] !== value) set[name] = value;
  }
  for (const name of Object.keys(before.env)) {
    if (!SHELL_MAINTAINED.has(name) && !(name in after.env)) unset.push(name);
  }
  return { ...(after.cwd !== before.cwd ? { cwd: after.cwd } : {}), set, unset };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
