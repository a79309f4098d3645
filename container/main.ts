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
 */
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ASSIGNMENT_FROM_STDIN_VAR, ENGINE_SERVER_SECRET_VAR, LISTEN_FD_VAR, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "../protocol/server-env-names.ts";
import { BUNDLE_ENTRY } from "../server-kit/bundle-layout.ts";
import { serverNodeFlags } from "../server-kit/node-flags.ts";
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
let secret: string | undefined;
/** Set for a server started before its sandbox: it tells the runtime once it serves. */
let announceListening: (() => void) | undefined;
if (process.env[ASSIGNMENT_FROM_STDIN_VAR] === "1") {
  const assignmentModule = await import("./boot/assignment.ts");
  const { prepareForAssignment, readAssignment, applyAssignment } = assignmentModule;
  announceListening = assignmentModule.announceListening;
  prepareForAssignment();
  const assignment = readAssignment();
  applyAssignment(assignment);
  secret = assignment.secret;
} else if (process.env[SECRET_FROM_STDIN_VAR] === "1") {
  secret = readSecret();
} else if (process.env[ENGINE_SERVER_SECRET_VAR]) {
  // On Cloudflare: the Durable Object's secret, which came in the container's environment.
  secret = process.env[ENGINE_SERVER_SECRET_VAR];
}
delete process.env[ENGINE_SERVER_SECRET_VAR];

// Before listening: a stop asked for the moment the port is open (the runtime may ask that soon) is
// a clean one. A stop that comes before the server exists ends the process once it does.
let stopping = false;
let started: { close(): Promise<void> } | undefined;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    if (started) void started.close().finally(() => process.exit(0));
  });
}

const server = await startServer({
  ...(secret === undefined ? {} : { secret }),
  ...(process.env[RUN_TAG_VAR] ? { runTag: process.env[RUN_TAG_VAR] } : {}),
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST || "127.0.0.1",
  ...(process.env[LISTEN_FD_VAR] ? { listenFd: Number(process.env[LISTEN_FD_VAR]) } : {}),
  workspace: process.env.WORKSPACE || ".sandbox/workspace",
  ...(process.env.SANDBOX_HOME ? { home: process.env.SANDBOX_HOME } : {}),
});
started = server;
if (stopping) void server.close().finally(() => process.exit(0));
announceListening?.();

// A server whose parent is gone (the local runtime killed outright) serves no one: it stops, and its
// processes with it, rather than live on as an orphan. In a container its parent is init, which stays.
const parent = process.ppid;
const ORPHAN_CHECK_MS = 2_000;
setInterval(() => {
  if (process.ppid === parent || stopping) return;
  stopping = true;
  console.error(`container server: its parent (pid ${parent}) is gone: stopping`);
  void server.close().finally(() => process.exit(0));
}, ORPHAN_CHECK_MS).unref();
console.log(`container server listening on ${server.url} (workspace ${server.workspace})`);

// One bad request must not take every sandbox process down with it: log and keep serving.
process.on("uncaughtException", (error) => console.error("uncaught exception:", error));
process.on("unhandledRejection", (error) => console.error("unhandled rejection:", error));

/** The secret, read from stdin up to its end (the runtime writes one line and closes the pipe). */
function readSecret(): string {
  const secret = readFileSync(0, "utf8").trim();
  if (secret === "") {
    console.error(`${SECRET_FROM_STDIN_VAR}=1 but stdin held no secret: refusing to serve without one`);
    process.exit(1);
  }
  return secret;
}
