/**
 * The image's command: a POSIX shell script that starts the server once, on main.js, with its Node
 * flags (node-flags.ts), telling it that the environment it was started with is the image's
 * (IMAGE_ENV_VAR): commands start from it (less the server's own variables, boot/server-env.ts).
 *
 * Why a script: main.ts re-executes a server started with variables it would not keep, and that is
 * a second Node start (about 30 ms of CPU, four times as long on a quarter of a CPU). Started from
 * here, it keeps them all, so it does not. The script is written into the bundle from those
 * modules, so no list is kept twice.
 */
import { IMAGE_ENV_VAR } from "../../protocol/server-env-names.ts";
import { BUNDLE_ENTRY, BUNDLE_SNAPSHOT } from "../../server-kit/bundle-layout.ts";
import { nodeFlagName, SERVER_NODE_FLAGS } from "../../server-kit/node-flags.ts";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** What may stand unquoted in the script (a flag is one word, with nothing the shell would expand). */
const PLAIN_FLAG = /^--[A-Za-z0-9-]+(=[A-Za-z0-9._-]+)?$/;

/** The script's text; it runs the snapshot and `main.js` from its own folder. */
export function startScript(): string {
  if (!NAME.test(IMAGE_ENV_VAR)) throw new Error(`cannot set ${JSON.stringify(IMAGE_ENV_VAR)} in the start script`);
  for (const flag of SERVER_NODE_FLAGS) if (!PLAIN_FLAG.test(flag)) throw new Error(`cannot pass ${JSON.stringify(flag)} through the start script`);
  return [
    "#!/bin/sh",
    "# Starts the container server on the image's environment (made by container/boot/start-script.ts).",
    "flags=",
    // As serverNodeFlags: a flag whose name NODE_OPTIONS already sets is left to NODE_OPTIONS.
    ...SERVER_NODE_FLAGS.map((flag) => `case " $NODE_OPTIONS " in *${nodeFlagName(flag)}*) ;; *) flags="$flags ${flag}" ;; esac`),
    'node=$(command -v node) || { echo "start.sh: node is not on PATH" >&2; exit 127; }',
    `export ${IMAGE_ENV_VAR}=1`,
    `exec "$node" $flags --snapshot-blob "\${0%/*}/${besideScript(BUNDLE_SNAPSHOT)}" "\${0%/*}/${besideScript(BUNDLE_ENTRY)}" "$@"`,
    "",
  ].join("\n");
}

/** A file of the bundle's container/ folder, where the script lies, by its name there. */
function besideScript(path: string): string {
  const [folder, name, ...rest] = path.split("/");
  if (folder !== "container" || !name || rest.length > 0 || !/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`${path} is not beside the start script`);
  return name;
}
