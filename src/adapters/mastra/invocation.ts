/**
 * How Mastra's `(command, args)` becomes a call to the service. Mastra's command is shell text and
 * its args are appended as separate words. Quoting them into the text would work too, but one slip
 * in a quoting rule is a shell injection; instead the args travel as real argv entries of
 * `bash -c '<command> "$@"' bash <args…>`, so the shell never parses them.
 */

export interface Invocation {
  /** Program or shell text for the service. */
  command: string;
  /** Direct-exec arguments (the service runs `command` without a shell when they are given). */
  args?: string[];
}

export function invocationOf(command: string, args: readonly string[] | undefined): Invocation {
  if (args === undefined || args.length === 0) return { command };
  return { command: "bash", args: ["-c", `${command} "$@"`, "bash", ...args] };
}

/** The command line as Mastra reports it (`CommandResult.command`): args shell-quoted for reading. */
export function displayCommand(command: string, args: readonly string[] | undefined): string {
  if (args === undefined || args.length === 0) return command;
  return `${command} ${args.map(quoteForDisplay).join(" ")}`;
}

function quoteForDisplay(arg: string): string {
  return /^[A-Za-z0-9._\-/=:@]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
