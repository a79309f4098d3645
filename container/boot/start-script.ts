/**
 * The image's command: a POSIX shell script that starts the server as main.ts would re-execute it,
 * with only the variables the server reads (server-env.ts) and its Node flags (node-flags.ts).
 *
 * Why: a container is started with an environment the server must not keep in its
 * /proc/<pid>/environ, so main.ts re-executes itself with a scrubbed one, and that is a second Node
 * start (about 30 ms of CPU, four times as long on a quarter of a CPU). The shell does the same
 * scrub for about a millisecond, then execs Node once; main.js, started clean, does not re-execute.
 * The script is written into the bundle from those two modules, so neither list is kept twice.
 */
import { SERVER_ENV_NAMES } from "./server-env.ts";
import { nodeFlagName, SERVER_NODE_FLAGS } from "../../server-kit/node-flags.ts";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** What may stand unquoted in the script (a flag is one word, with nothing the shell would expand). */
const PLAIN_FLAG = /^--[A-Za-z0-9-]+(=[A-Za-z0-9._-]+)?$/;

/** The script's text; it runs `main.js` from its own folder. */
export function startScript(): string {
  const names = [...SERVER_ENV_NAMES].sort();
  for (const name of names) if (!NAME.test(name)) throw new Error(`cannot pass ${JSON.stringify(name)} through the start script`);
  for (const flag of SERVER_NODE_FLAGS) if (!PLAIN_FLAG.test(flag)) throw new Error(`cannot pass ${JSON.stringify(flag)} through the start script`);
  // `${NAME+"NAME=$NAME"}`: one word when NAME is set (even to nothing), none when it is not.
  const kept = names.map((name) => `\${${name}+"${name}=$${name}"}`);
  return [
    "#!/bin/sh",
    "# Starts the container server with only the variables it reads (made by container/boot/start-script.ts).",
    "flags=",
    // As serverNodeFlags: a flag whose name NODE_OPTIONS already sets is left to NODE_OPTIONS.
    ...SERVER_NODE_FLAGS.map((flag) => `case " $NODE_OPTIONS " in *${nodeFlagName(flag)}*) ;; *) flags="$flags ${flag}" ;; esac`),
    'node=$(command -v node) || { echo "start.sh: node is not on PATH" >&2; exit 127; }',
    `exec env -i \\\n  ${kept.join(" \\\n  ")} \\\n  "$node" $flags "\${0%/*}/main.js" "$@"`,
    "",
  ].join("\n");
}
