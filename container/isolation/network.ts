/**
 * The network of a sandbox under bwrap: one network namespace of its own, shared by all its commands
 * the way processes of one container share theirs (a server one command starts is reachable from
 * another command, and from the sandbox's preview ports, on the sandbox's 127.0.0.1).
 *
 * Without network allowed the namespace has only loopback: it is held by a bwrap process (bwrap
 * brings loopback up in a namespace it creates; `unshare` would leave it down). With network allowed
 * it is connected outward by slirp4netns, a user-space TCP/IP stack that dials out from the host as
 * an ordinary process, so commands reach outside networks but never the host's loopback
 * (`--disable-host-loopback`) nor any other interface of the host directly. Sharing the host's
 * namespace instead would hand commands every service listening on the host's 127.0.0.1.
 *
 * One namespace per server, held by a small process that lives as long as the server: every command
 * is entered into it with `nsenter` in front of bwrap, which costs one exec. The holder and
 * slirp4netns each watch a pipe from the server and exit when it closes, so a server that is killed
 * outright does not leave them behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { findExecutable } from "../../server-kit/executables.ts";
import { ServiceError } from "../../server-kit/service-error.ts";

/** The Debian package that provides the user-space network. */
export const NETWORK_PACKAGE = "slirp4netns";

/** How long the namespace and its network may take to come up before commands are refused. */
const START_TIMEOUT_MS = 10_000;

interface NetworkPrograms {
  unshare: string;
  nsenter: string;
  slirp4netns: string;
}

/** What a loopback-only namespace needs: bwrap (which holds it) and nsenter (which enters commands into it). */
export interface LoopbackPrograms {
  bwrap: string;
  nsenter: string;
}

/** nsenter, or why it is missing; looked up as findNetworkPrograms does. */
export function findNsenter(
  dirs: readonly string[] = [...(process.env.PATH || "").split(path.delimiter), "/usr/bin", "/bin", "/usr/sbin", "/sbin"],
): string | { missing: string } {
  return findExecutable("nsenter", dirs) ?? { missing: "nsenter is not installed: apt-get install util-linux" };
}

/**
 * The programs a sandbox network needs, or why it cannot have one. Looked up once per server, in
 * PATH and the system directories unless `dirs` names others.
 */
export function findNetworkPrograms(
  dirs: readonly string[] = [...(process.env.PATH || "").split(path.delimiter), "/usr/bin", "/bin", "/usr/sbin", "/sbin"],
): NetworkPrograms | { missing: string } {
  const slirp4netns = findExecutable("slirp4netns", dirs);
  if (!slirp4netns) return { missing: `slirp4netns is not installed: apt-get install ${NETWORK_PACKAGE}` };
  const unshare = findExecutable("unshare", dirs);
  const nsenter = findExecutable("nsenter", dirs);
  if (!unshare || !nsenter) return { missing: "unshare and nsenter are not installed: apt-get install util-linux" };
  return { unshare, nsenter, slirp4netns };
}

export class SandboxNetwork {
  readonly #programs: NetworkPrograms | LoopbackPrograms;
  readonly #children: ChildProcess[] = [];
  readonly #ready: Promise<number>;
  #closed = false;

  /**
   * Starts the namespace (and, given slirp4netns, its way out); commands wait for them in
   * `commandPrefix`. Given LoopbackPrograms the namespace has loopback only.
   */
  constructor(programs: NetworkPrograms | LoopbackPrograms) {
    this.#programs = programs;
    this.#ready = "slirp4netns" in programs ? this.#start(programs) : this.#startLoopback(programs);
    // A failure is reported to every command that asks; nothing is left unhandled meanwhile.
    this.#ready.catch(() => undefined);
  }

  /** What goes in front of the bwrap argv so the command runs inside the sandbox's network. */
  async commandPrefix(): Promise<string[]> {
    const holder = await this.#ready;
    return [this.#programs.nsenter, "--user", "--net", "--preserve-credentials", "--target", String(holder), "--"];
  }

  /** Stops the network and the namespace (the server's own children, by their pids). */
  close(): void {
    this.#closed = true;
    for (const child of this.#children) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }

  async #start(programs: NetworkPrograms): Promise<number> {
    // The holder announces itself once it is inside the new namespaces: slirp4netns must not be
    // attached before that, or it would configure the host's own namespace.
    const holder = this.#track(
      spawn(programs.unshare, ["--user", "--map-root-user", "--net", "--", "/bin/sh", "-c", "echo; exec cat >/dev/null"], {
        stdio: ["pipe", "pipe", "pipe"],
      }),
    );
    await firstOutput(holder, holder.stdout!, "the sandbox's network namespace");
    const pid = holder.pid!;
    const slirp = this.#track(
      spawn(
        programs.slirp4netns,
        ["--configure", "--mtu", "65520", "--disable-host-loopback", "--exit-fd", "3", "--ready-fd", "4", String(pid), "tap0"],
        { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
      ),
    );
    await firstOutput(slirp, slirp.stdio[4] as NodeJS.ReadableStream, "slirp4netns");
    return pid;
  }

  /** A bwrap holder: its info fd names the pid inside the new namespaces once they exist. */
  async #startLoopback(programs: LoopbackPrograms): Promise<number> {
    const holder = this.#track(
      spawn(
        programs.bwrap,
        ["--unshare-user", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--info-fd", "3", "--", "/bin/sh", "-c", "exec cat >/dev/null"],
        { stdio: ["pipe", "ignore", "pipe", "pipe"] },
      ),
    );
    const info = await allOutput(holder, holder.stdio[3] as NodeJS.ReadableStream, "the sandbox's network namespace");
    const pid = (JSON.parse(info) as { "child-pid"?: unknown })["child-pid"];
    if (typeof pid !== "number") throw new ServiceError("ISOLATION_UNAVAILABLE", `the sandbox network could not start: bwrap said ${info.slice(0, 200)}`);
    return pid;
  }

  #track(child: ChildProcess): ChildProcess {
    this.#children.push(child);
    child.on("error", () => undefined);
    // They live as long as the server, never longer, and never keep it from exiting on their own.
    child.unref();
    for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    if (this.#closed) child.kill("SIGKILL");
    return child;
  }
}

/** Everything written to `stream` until it closes (bwrap closes its info fd once written). */
async function allOutput(child: ChildProcess, stream: NodeJS.ReadableStream, what: string): Promise<string> {
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const ended = new Promise<void>((resolve) => stream.once("end", () => resolve()));
  await firstOutput(child, stream, what);
  await ended;
  return text;
}

/** Resolves at the first byte on `stream`; rejects with what the program said if it ends first. */
function firstOutput(child: ChildProcess, stream: NodeJS.ReadableStream, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      if (said.length < 2000) said += chunk.toString();
    });
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(
        new ServiceError("ISOLATION_UNAVAILABLE", `the sandbox network could not start: ${what} ${reason}${said ? `: ${said.trim()}` : ""}`, {
          isolation: "bwrap",
          reason: `${what} ${reason}`,
        }),
      );
    };
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    stream.once("data", () => {
      clearTimeout(timer);
      resolve();
    });
    child.once("error", (error) => fail(`failed to start (${error.message})`));
    child.once("exit", (code, signal) => fail(`exited (${signal ?? `code ${code}`})`));
  });
}
