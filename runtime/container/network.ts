/**
 * A container's way out, for sandboxes allowed the network: slirp4netns, a user-space TCP/IP stack
 * attached from outside to the container's network namespace (which otherwise holds only loopback).
 * Connections leave from the host as an ordinary process, never reaching the host's own loopback
 * (`--disable-host-loopback`). It runs as the container's host user, entering the container's user
 * namespace, and ends when the runtime closes its exit pipe or the container's namespace goes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import type { HostUser } from "./host-users.ts";

const START_TIMEOUT_MS = 10_000;

export interface ContainerNetwork {
  close(): void;
}

/** Attaches the way out to the namespaces of `pid` (a process inside the container); resolves once it is up. */
export function attachNetwork(slirp4netns: string, pid: number, user: HostUser | undefined): Promise<ContainerNetwork> {
  const child: ChildProcess = spawn(
    slirp4netns,
    [
      "--configure", "--mtu", "65520", "--disable-host-loopback",
      "--userns-path", `/proc/${pid}/ns/user`,
      "--exit-fd", "3", "--ready-fd", "4",
      String(pid), "tap0",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], ...(user ? { uid: user.uid, gid: user.gid } : {}) },
  );
  const exitPipe = child.stdio[3] as Writable;
  const close = () => {
    exitPipe.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  child.unref();
  for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  return new Promise((resolve, reject) => {
    let said = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      if (said.length < 2000) said += chunk.toString();
    });
    const fail = (why: string) => {
      clearTimeout(timer);
      close();
      reject(new Error(`the sandbox's network could not start: slirp4netns ${why}${said ? `: ${said.trim()}` : ""}`));
    };
    const timer = setTimeout(() => fail(`did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    (child.stdio[4] as NodeJS.ReadableStream).once("data", () => {
      clearTimeout(timer);
      resolve({ close });
    });
    child.once("error", (error) => fail(`failed to start (${error.message})`));
    child.once("exit", (code, signal) => fail(`exited (${signal ?? `code ${code}`})`));
  });
}
