/**
 * The server's program once its process is the one that serves: reads its secret (or, for a server
 * started before its sandbox, its sandbox's assignment; a warm one rehearses its first requests
 * meanwhile, boot/rehearsal.ts), starts the server, stops cleanly on SIGTERM/SIGINT and when its
 * parent is gone. Run by main.ts (after any re-execution) and by the image's startup snapshot
 * (boot/snapshot-entry.ts).
 *
 * Why `startServer` is passed in: main.ts imports the server on first use, so the process that only
 * re-executes itself never loads it, while the snapshot imports it at build time, so it is in the
 * snapshot already. Either way this module loads only what it needs itself.
 */
import { readFileSync } from "node:fs";
import { ASSIGNMENT_FROM_STDIN_VAR, ENGINE_SERVER_SECRET_VAR, LISTEN_FD_VAR, REHEARSE_VAR, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "../../protocol/server-env-names.ts";
import type { startServer as StartServer } from "../server.ts";

/** Serves until a signal, or its parent's end, stops it. */
export async function serve(startServer: typeof StartServer): Promise<void> {
  let secret: string | undefined;
  /** Set for a server started before its sandbox: it tells the runtime once it serves. */
  let announceListening: (() => void) | undefined;
  if (process.env[ASSIGNMENT_FROM_STDIN_VAR] === "1") {
    const assignmentModule = await import("./assignment.ts");
    const { prepareForAssignment, readAssignment, applyAssignment } = assignmentModule;
    announceListening = assignmentModule.announceListening;
    const assigned = readAssignment();
    // A warm server, while it waits at the pool's least share of the CPU: what a sandbox's first
    // requests would pay. One taken before it is done stops rehearsing, its sandbox waiting.
    if (process.env[REHEARSE_VAR] === "1") await (await import("./rehearsal.ts")).rehearse(startServer, assigned);
    prepareForAssignment();
    const assignment = await assigned;
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
}

/** The secret, read from stdin up to its end (the runtime writes one line and closes the pipe). */
function readSecret(): string {
  const secret = readFileSync(0, "utf8").trim();
  if (secret === "") {
    console.error(`${SECRET_FROM_STDIN_VAR}=1 but stdin held no secret: refusing to serve without one`);
    process.exit(1);
  }
  return secret;
}
