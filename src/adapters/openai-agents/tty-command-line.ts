/**
 * The command line a TTY command runs as, built the way the SDK's Cloudflare client builds its
 * commands: into the working directory (the manifest's root, or `workdir` under it), with the
 * manifest's environment exported, then the command; through `shell` (`-lc`, or `-c` without
 * `login`) when the model named one.
 */
import type { ExecCommandArgs } from "@openai/agents-core/sandbox";
import { assertShellEnvironmentName, shellQuote } from "@openai/agents-core/sandbox/internal";

export function ttyCommandLine(args: ExecCommandArgs, root: string, environment: Record<string, string>): string {
  const workdir = args.workdir === undefined ? root : args.workdir.startsWith("/") ? args.workdir : `${root.replace(/\/$/, "")}/${args.workdir}`;
  const exports = Object.entries(environment).map(([name, value]) => {
    assertShellEnvironmentName(name);
    return `export ${name}=${shellQuote(value)}`;
  });
  const script = `cd ${shellQuote(workdir)} || exit $?\n${[...exports, args.cmd].join(" && ")}`;
  if (args.shell === undefined) return script;
  return `${args.shell} ${args.login === false ? "-c" : "-lc"} ${shellQuote(script)}`;
}
