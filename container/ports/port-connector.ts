/**
 * How the container server opens a TCP connection to a port of the sandbox. Without isolation the
 * sandbox's servers share the server's network: its loopback directly (127.0.0.1, else ::1). Under bwrap they live in the
 * sandbox's own network namespace, which the server is not in: a forwarder started inside it
 * (forwarder.cjs, started on the first connection and stopped with the server) listens on a unix
 * socket in the server's private state directory, and each connection names its port in a first line.
 *
 * Either way a port nothing listens on is PORT_NOT_LISTENING at once, never a hang.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { connect, type Socket } from "node:net";
import { ServiceError } from "../../server-kit/service-error.ts";
import { serverAssetPath } from "../server-assets.ts";

export interface PortConnector {
  /** A connected socket to 127.0.0.1:`port` in the sandbox's network, possibly paused (resume it once reading). */
  connect(port: number): Promise<Socket>;
  close(): void;
}

interface Loopback {
  connectLoopback(port: number, done: (error: NodeJS.ErrnoException | null, socket?: Socket) => void): void;
}
/**
 * Required on the first connection, not at import: the image's startup snapshot (boot/snapshot.ts)
 * cannot hold a module loaded from a file, and its files' paths are known only once it runs.
 */
let loopback: Loopback | undefined;
const loadLoopback = (): Loopback => (loopback ??= createRequire(import.meta.url)(serverAssetPath("loopback")) as Loopback);
/** How long the forwarder may take to listen before a connection is refused. */
const FORWARDER_START_TIMEOUT_MS = 10_000;

function notListening(port: number, reason: string): ServiceError {
  return new ServiceError("PORT_NOT_LISTENING", `nothing in the sandbox listens on port ${port} (${reason})`, { port });
}

/** Connections on the server's own loopback (no isolation). */
export function directConnector(): PortConnector {
  return {
    connect: (port) =>
      new Promise((resolve, reject) => {
        loadLoopback().connectLoopback(port, (error, socket) => (error ? reject(notListening(port, error.code ?? error.message)) : resolve(socket!)));
      }),
    close: () => undefined,
  };
}

/** Connections through a forwarder inside the sandbox's network namespace. */
export class ForwarderConnector implements PortConnector {
  readonly #enter: () => Promise<string[]>;
  readonly #socketPath: string;
  #forwarder: { child?: ChildProcess; ready: Promise<void>; exited: boolean } | undefined;
  #closed = false;

  /** `enter`: the argv prefix that runs a program inside the namespace; `socketPath`: in a 0700 directory of the server's. */
  constructor(enter: () => Promise<string[]>, socketPath: string) {
    this.#enter = enter;
    this.#socketPath = socketPath;
  }

  async connect(port: number): Promise<Socket> {
    await this.#started();
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ path: this.#socketPath });
      s.once("connect", () => resolve(s));
      s.once("error", (error) => reject(new ServiceError("INTERNAL_ERROR", `the port forwarder is not reachable: ${error.message}`)));
    });
    socket.removeAllListeners("error");
    socket.write(`${port}\n`);
    const answer = await readLine(socket);
    if (answer !== "OK") {
      socket.destroy();
      throw notListening(port, answer.replace(/^ERR /, "") || "closed");
    }
    socket.setNoDelay(true);
    return socket;
  }

  close(): void {
    this.#closed = true;
    const child = this.#forwarder?.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }

  /** One forwarder at a time: connections made while it starts wait for the same one; a dead one is replaced. */
  #started(): Promise<void> {
    if (this.#closed) return Promise.reject(new ServiceError("INTERNAL_ERROR", "the server is closing"));
    const current = this.#forwarder;
    if (current && !current.exited) return current.ready;
    const state: { child?: ChildProcess; ready: Promise<void>; exited: boolean } = { ready: Promise.resolve(), exited: false };
    state.ready = this.#start(state);
    state.ready.catch(() => (state.exited = true));
    this.#forwarder = state;
    return state.ready;
  }

  async #start(state: { child?: ChildProcess; exited: boolean }): Promise<void> {
    const [file, ...prefix] = await this.#enter();
    const child = spawn(file!, [...prefix, process.execPath, serverAssetPath("portForwarder"), this.#socketPath], { stdio: ["pipe", "pipe", "pipe"] });
    state.child = child;
    child.once("exit", () => (state.exited = true));
    child.on("error", () => undefined);
    // It lives as long as the server, never longer, and never keeps it from exiting on its own.
    child.unref();
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    const ready = new Promise<void>((resolve, reject) => {
      let said = "";
      child.stderr!.on("data", (chunk: Buffer) => {
        if (said.length < 2000) said += chunk.toString();
      });
      const timer = setTimeout(() => reject(new ServiceError("INTERNAL_ERROR", "the port forwarder did not start in time")), FORWARDER_START_TIMEOUT_MS);
      child.stdout!.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new ServiceError("INTERNAL_ERROR", `the port forwarder exited (${signal ?? `code ${code}`})${said ? `: ${said.trim()}` : ""}`));
      });
    });
    if (this.#closed) child.kill("SIGKILL");
    return ready;
  }
}

/** The first line the forwarder answers (without its newline); bytes after it are put back. */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\n");
      if (end === -1) return;
      finish();
      const rest = text.slice(end + 1);
      if (rest) socket.unshift(Buffer.from(rest, "latin1"));
      resolve(text.slice(0, end));
    };
    const onEnd = () => {
      finish();
      resolve(text.split("\n")[0] ?? "");
    };
    const finish = () => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onEnd);
      socket.pause();
    };
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("error", onEnd);
  });
}
