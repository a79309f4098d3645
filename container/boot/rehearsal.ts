/**
 * A warm server's rehearsal. Before it is told its sandbox, a server waiting in the runtime's pool
 * starts a throwaway server of its own, reached only from this process (no socket: nothing outside
 * the process can reach it), asks it what a new sandbox's server is asked first (its ping, then a
 * command in the default session) and closes it. What those first requests would otherwise pay once
 * a sandbox waits for them (node:http and the resolver loaded, the code of routing, of the exec
 * route, of a spawn and of the session's capture run for the first time, the exec schemas built,
 * bash's default options asked) is then paid while the server waits, at the pool's least share of
 * the CPU.
 *
 * Nothing of a sandbox is involved: the throwaway server has a workspace of its own in a temporary
 * folder (removed after), a random secret kept nowhere, its own instance id, and it is closed (its
 * processes killed) before the server says it has booted; the server told its sandbox is started
 * anew. What stays are caches that no sandbox's settings enter: compiled code, built schemas,
 * bash's default options (asked with an empty environment), the isolation probe.
 */
import { randomBytes } from "node:crypto";
import { lookup } from "node:dns";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { isIPv6 } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { EXEC_ROUTES } from "../../protocol/process.ts";
import { RUN_TAG_VAR } from "../../protocol/server-env-names.ts";
import { isAlive } from "../../server-kit/process-alive.ts";
import type { RunningServer, startServer as StartServer } from "../server.ts";

/** The rehearsal's command: a shell builtin, so it costs a spawn of bash and no program of its own. */
const COMMAND = "true";

/** The rehearsal's temporary folder: this prefix, the server's pid, a random tail. */
export const REHEARSAL_FOLDER_PREFIX = "sandbox-rehearsal-";

/** Longest the rehearsal may take (a machine too busy to answer): the server then boots without it. */
const REHEARSAL_TIMEOUT_MS = 10_000;

/** As in server-kit/http/serve.ts: node:http through require (its ESM namespace would load undici). */
const requireHere = createRequire(import.meta.url);
const nodeHttp = () => requireHere("node:http") as typeof import("node:http");
const nodeCluster = () => requireHere("node:cluster") as unknown;

/**
 * Runs the rehearsal until it is done or `until` settles (the server's assignment came); never
 * fails (a server that could not rehearse, or was told its sandbox first, boots as it did before).
 */
export async function rehearse(startServer: typeof StartServer, until: Promise<unknown>): Promise<void> {
  const started = performance.now();
  let interrupted = false;
  const interrupt = () => (interrupted = true);
  until.then(interrupt, interrupt);
  /** Between steps: a server told its sandbox meanwhile leaves the rest (its sandbox waits for it). */
  const goOn = () => {
    if (interrupted) throw new Error("told its sandbox first");
  };
  sweepLeftRehearsals();
  const scratch = mkdtempSync(join(tmpdir(), `${REHEARSAL_FOLDER_PREFIX}${process.pid}-`));
  const played = (async () => {
    let server: RunningServer | undefined;
    try {
      const secret = randomBytes(24).toString("hex");
      // Its commands' tags lie below the run's, as every command of this server's does: the runtime finds them too.
      const runTag = process.env[RUN_TAG_VAR];
      server = await startServer({ workspace: join(scratch, "workspace"), secret, inProcess: true, warmCodeLanguages: [], ...(runTag ? { runTag: `${runTag}/rehearsal` } : {}) });
      goOn();
      await ask(server, secret, "GET", INFO_ROUTES.ping);
      goOn();
      await ask(server, secret, "POST", EXEC_ROUTES.execute, { command: COMMAND });
      goOn();
      await rehearseListening();
    } finally {
      await server?.close();
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${REHEARSAL_TIMEOUT_MS} ms`)), REHEARSAL_TIMEOUT_MS);
  });
  late.catch(() => undefined);
  try {
    await Promise.race([played, late]);
    // Its own line in the log, which also makes stdout's stream (made on first use) before the server's "listening" line.
    console.log(`container server: rehearsed its first requests (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    if (interrupted) console.log("container server: told its sandbox while it rehearsed: the rest left out");
    else console.error(`container server: rehearsal before its sandbox failed (${(error as Error).message}); booting without it`);
  } finally {
    clearTimeout(timer);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Removes the folders of rehearsals whose server is gone (one killed outright while it rehearsed
 * cannot remove its own), as a server's start sweeps stale state folders. Best effort.
 */
function sweepLeftRehearsals(): void {
  const owned = new RegExp(`^${REHEARSAL_FOLDER_PREFIX}(\\d+)-[A-Za-z0-9]{6}$`);
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(owned.exec(name)?.[1]);
    if (pid && !isAlive(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/** One request over a new in-process connection; resolves with the answer's body once it ended, rejects on an error status. */
function ask(server: RunningServer, secret: string, method: string, path: string, body?: unknown): Promise<string> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = nodeHttp().request(
      {
        method,
        path,
        createConnection: () => server.connect!(),
        headers: {
          authorization: `Bearer ${secret}`,
          ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => (response.statusCode === 200 ? resolve(text) : reject(new Error(`${method} ${path}: ${response.statusCode} ${text}`))));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

/**
 * What binding a port runs for the first time, short of binding one: a server given a host looks it
 * up first, even an address (node:dns loads, Node's address checks run: an IPv6 pattern compiled on
 * first use), and node:cluster loads. Here rather than once the server is told its sandbox.
 */
function rehearseListening(): Promise<void> {
  // V8 runs a pattern's first match interpreted and compiles it at the next: both, here.
  for (let i = 0; i < 3; i++) isIPv6("127.0.0.1");
  nodeCluster(); // binding a port asks node:cluster whether this process is a cluster's worker
  return new Promise((resolve) => lookup("127.0.0.1", { all: true }, () => resolve()));
}
