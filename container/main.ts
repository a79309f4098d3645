/**
 * `npm run container`: the container process server as a program. PORT (default 3000), HOST
 * (default 127.0.0.1; the image sets 0.0.0.0), WORKSPACE (default .sandbox/workspace),
 * SANDBOX_HOME (HOME of commands; default the workspace), SANDBOX_LISTEN_FD (serve on that inherited
 * listening socket instead of PORT: the runtime's containers). With SANDBOX_SECRET_FROM_STDIN=1 (the local
 * runtime sets it) the server reads its secret from stdin and answers only to requests carrying it;
 * else from SANDBOX_ENGINE_SERVER_SECRET, where the Durable Object puts it on Cloudflare.
 *
 * Before serving, it re-executes itself (same pid) for two reasons:
 * - with a scrubbed environment (boot/server-env.ts): only the variables the server reads, so what
 *   a server was started with is not in /proc/<server pid>/environ for commands to read (unless the
 *   environment is marked as the image's, which commands start from anyway);
 * - started from the TypeScript sources, on the server's bundle (boot/bundle.ts: it loads several
 *   times faster than the sources, and a process without Node's TypeScript stripper resident spawns
 *   faster). SANDBOX_BUNDLE=0 turns that off.
 * The new process also gets a small young generation (server-kit/node-flags.ts), for the same reason.
 * The local runtime avoids both: it starts the bundle itself, with a scrubbed environment; the
 * image's command, the bundle's start.sh (boot/start-script.ts), marks its environment as the
 * image's. A bundle started with variables it does not read, unmarked, still re-executes itself, to scrub them.
 *
 * With SANDBOX_ASSIGNMENT_FROM_STDIN=1 the server is started before it knows its sandbox: it loads
 * its code, then reads its secret and its sandbox's environment from stdin (boot/assignment.ts).
 * What the serving process does is boot/serve.ts, which the image's startup snapshot runs too.
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { BUNDLE_ENTRY } from "../server-kit/bundle-layout.ts";
import { serverNodeFlags } from "../server-kit/node-flags.ts";
import { serve } from "./boot/serve.ts";
import { hasForeignVariables, serverEnvironment } from "./boot/server-env.ts";

/** Named apart so the bundler leaves it out of the bundle (the bundle never builds itself). */
const BUNDLER = "./boot/bundle.ts";

const env = serverEnvironment(process.env);
let entry: string | undefined;
if (import.meta.url.endsWith(".ts") && env.SANDBOX_BUNDLE !== "0") {
  try {
    const { bundleServer } = (await import(BUNDLER)) as typeof import("./boot/bundle.ts");
    entry = join(await bundleServer(), BUNDLE_ENTRY);
  } catch (error) {
    console.error(`running from TypeScript sources (the bundle could not be made: ${(error as Error).message})`);
    env.SANDBOX_BUNDLE = "0"; // a re-exec below need not fail the same way again
  }
}
if (entry === undefined && hasForeignVariables(process.env)) entry = fileURLToPath(import.meta.url);
if (entry !== undefined) {
  try {
    process.execve!(process.execPath, [process.execPath, ...serverNodeFlags(process.execArgv, env.NODE_OPTIONS), entry, ...process.argv.slice(2)], env);
  } catch (error) {
    // No process.execve (Node < 22.15), or the exec failed: serve from here, unscrubbed.
    console.error(`cannot re-execute the server (${(error as Error).message}): it keeps the environment it was started with`);
  }
}

const { startServer } = await import("./server.ts");
await serve(startServer);
