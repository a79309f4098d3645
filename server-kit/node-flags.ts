/**
 * The Node flags of the server process.
 *
 * Forking costs in proportion to the server's resident memory. Output read from pipes sits in C heap
 * blocks until a young-generation GC frees them, and the C heap keeps what it grew to; with a 1 MiB
 * semi-space those GCs come often enough that a long stream leaves the server ~20 MiB smaller, and
 * every later exec ~1 ms faster. Not applied when the caller sets the semi-space size itself. The
 * image's start script (container/boot/start-script.ts) applies the same rule in the shell.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1"];

/** A flag's name (`--max-semi-space-size`): a flag is added only where its name is not given already. */
export function nodeFlagName(flag: string): string {
  return flag.split("=")[0]!;
}

/** The flags to exec the server with, given those it runs with now and its NODE_OPTIONS. */
export function serverNodeFlags(execArgv: readonly string[], nodeOptions = ""): string[] {
  const given = [...execArgv, nodeOptions].join(" ");
  return [...execArgv, ...SERVER_NODE_FLAGS.filter((flag) => !given.includes(nodeFlagName(flag)))];
}
