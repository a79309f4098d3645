/**
 * The network of a sandbox whose commands may use one (bwrap with allowNetwork): a network namespace
 * of its own, connected outward by slirp4netns, a user-space TCP/IP stack that dials out from the
 * host as an ordinary process, so commands reach outside networks but never the host's loopback
 * (`--disable-host-loopback`) nor any other interface of the host directly. Sharing the host's
 * namespace instead would hand commands every service listening on the host's 127.0.0.1.
 *
 * One namespace per server, held by a small process (`unshare`) that lives as long as the server:
 * every command is entered into it with `nsenter` in front of bwrap, which costs one exec, so
 * commands of one sandbox share a network the way processes of one container do (one command can
 * reach a server another one started on the sandbox's loopback). The holder and slirp4netns each
 * watch a pipe from the server and exit when it closes, so a server that is killed outright does
 * not leave them behind.
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
  readonly #programs: NetworkPrograms;
  readonly #children: ChildProcess[] = [];
  readonly #ready: Promise<number>;
  #closed = false;

  /** Starts the namespace and its network; commands wait for them in `commandPrefix`. */
  constructor(programs: NetworkPrograms) {
    this.#programs = programs;
    this.#ready = this.#start();
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

  async #start(): Promise<number> {
    // The holder announces itself once it is inside the new namespaces: slirp4netns must not be
    // attached before that, or it would configure the host's own namespace.
    const holder = this.#track(
      spawn(this.#programs.unshare, ["--user", "--map-root-user", "--net", "--", "/bin/sh", "-c", "echo; exec cat >/dev/null"], {
        stdio: ["pipe", "pipe", "pipe"],
      }),
    );
    await firstOutput(holder, holder.stdout!, "the sandbox's network namespace");
    const pid = holder.pid!;
    const slirp = this.#track(
      spawn(
        this.#programs.slirp4netns,
        ["--configure", "--mtu", "65520", "--disable-host-loopback", "--exit-fd", "3", "--ready-fd", "4", String(pid), "tap0"],
        { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
      ),
    );
    await firstOutput(slirp, slirp.stdio[4] as NodeJS.ReadableStream, "slirp4netns");
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
