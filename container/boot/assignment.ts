/**
 * A server started before it knows its sandbox (the runtime's warm servers) boots, loads its code,
 * and then waits here for its assignment on stdin: the secret it answers to and the environment a
 * server started for that sandbox would have had. Applying it replaces the boot environment (but for
 * the run tag, which is the runtime's and set at exec), so from here on the server reads exactly what
 * a server started for the sandbox reads. process.env changes do not reach /proc/<pid>/environ, which
 * keeps showing the small boot environment: the sandbox's settings never appear there.
 */
import { closeSync, createReadStream, writeSync } from "node:fs";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { RUN_TAG_VAR, SERVER_STATUS, SERVER_STATUS_FD, serverAssignmentSchema, type ServerAssignment } from "../../protocol/runtime.ts";
import { serverEnvironment } from "./server-env.ts";

/**
 * Does ahead what every server does first, so a server taken from the pool starts listening sooner:
 * bubblewrap's probe (cached per binary; a sandbox naming another binary is probed on assignment).
 * Then tells the runtime it is ready for a sandbox.
 */
export function prepareForAssignment(): void {
  detectIsolation();
  tellRuntime(SERVER_STATUS.booted);
}

/** Tells the runtime the server serves: the last thing said on the status pipe, which is then closed. */
export function announceListening(): void {
  tellRuntime(SERVER_STATUS.listening);
  try {
    closeSync(SERVER_STATUS_FD);
  } catch {
    // started without that pipe
  }
}

function tellRuntime(status: string): void {
  try {
    writeSync(SERVER_STATUS_FD, `${status}\n`);
  } catch {
    // started without that pipe: nobody is waiting to hear it
  }
}

/**
 * Resolves once the runtime has written the assignment and closed stdin; exits the process on a bad
 * one. Read without blocking, so the server can rehearse meanwhile and stop as soon as it comes.
 */
export async function readAssignment(): Promise<ServerAssignment> {
  const chunks: Buffer[] = [];
  // Stdin stays open at its end, as a blocking read left it: a descriptor 0 freed would be the next file opened.
  for await (const chunk of createReadStream("", { fd: 0, autoClose: false })) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  let parsed;
  try {
    parsed = serverAssignmentSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) {
    console.error(text.trim() === "" ? "stdin closed before an assignment came: not serving" : "stdin held no valid assignment: not serving");
    process.exit(1);
  }
  return parsed.data;
}

/** Makes the assignment's environment the server's own (what a server keeps of it: server-env.ts). */
export function applyAssignment(assignment: ServerAssignment): void {
  const runTag = process.env[RUN_TAG_VAR];
  for (const name of Object.keys(process.env)) delete process.env[name];
  const wanted = serverEnvironment(assignment.env);
  delete wanted[RUN_TAG_VAR];
  Object.assign(process.env, wanted);
  if (runTag !== undefined) process.env[RUN_TAG_VAR] = runTag;
  if (process.env.WORKSPACE) {
    try {
      process.chdir(process.env.WORKSPACE); // where a server started for the sandbox starts
    } catch {
      // startServer creates the workspace; commands are given it as their folder either way
    }
  }
}
