/**
 * The container server of the built image, for the container tests to call instead of one started
 * in-process. `npm run test:image` builds the image, mounts it and names its descriptor (an
 * `ImageProcess` plus its root filesystem) in SANDBOX_TEST_IMAGE; each server is then the image's own
 * entrypoint and command, started under bubblewrap as a container engine would: that root filesystem
 * as /, its own process namespace (tini is PID 1, as in a container), a fresh /tmp, the image's
 * environment only, in its working directory. No secret and nothing on stdin: in production the
 * server is reachable only through its Durable Object and is started with the image's settings alone.
 *
 * What differs from production is the wiring a test needs: the host's network (the server listens on a
 * free loopback port, PORT and HOST), and a workspace the test can also reach, bound in at its own path
 * (WORKSPACE). Like an engine, it gives the container an /etc/hosts naming localhost: the image's own
 * is empty, and commands (the port probes among them) resolve localhost through it.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ImageProcess } from "../../scripts/image/rootfs.ts";
import { freePort, waitForListening } from "../../runtime/ports.ts";

/** Names the descriptor file of the image under test; unset, the tests use in-process servers. */
export const TEST_IMAGE_VAR = "SANDBOX_TEST_IMAGE";

/** The instance type the image is deployed on (wrangler.toml), whose limits a test runs it under. */
export interface ImageInstance {
  name: string;
  memoryBytes: number;
  vcpu: number;
}

export interface ImageDescriptor extends ImageProcess {
  rootfs: string;
  instance?: ImageInstance;
  /** Where a test leaves figures for `npm run test:image` to print (JSON lines). */
  reportFile?: string;
}

export interface ImageServerOptions {
  /** `cgroup.procs` files the container joins before it starts (its limits, as an instance's). */
  procsFiles?: string[];
  /** How often to look for the server listening, in ms (default 15): a start-up measurement asks often. */
  pollMs?: number;
  /** Runs this instead of the image's command, behind its entrypoint (a baseline server, for a benchmark). */
  command?: string[];
}

export interface ImageServer {
  url: string;
  workspace: string;
  /** HOME of commands, as the image configures it. */
  home: string;
  /** The host's pid of the container's outermost process (bwrap, or the shell that joins its groups and becomes bwrap). */
  pid: number;
  /** performance.now() when the container was started, and when its server was first seen listening. */
  startedAt: number;
  listeningAt: number;
  close(): Promise<void>;
}

/** The image under test, when the tests run against one. */
export function testImage(): ImageDescriptor | undefined {
  const file = process.env[TEST_IMAGE_VAR];
  return file ? (JSON.parse(readFileSync(file, "utf8")) as ImageDescriptor) : undefined;
}

const HOST = "127.0.0.1";
const STOP_GRACE_MS = 5000;
/** `sh -c` script: its first argument counts the cgroup.procs files that follow; the rest are bwrap's. */
const JOIN_THEN_BWRAP = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 1; shift; n=$((n - 1)); done; exec bwrap "$@"';
const HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";

export async function startImageServer(image: ImageDescriptor, options: ImageServerOptions = {}): Promise<ImageServer> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-image-")));
  const workspace = join(dir, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(dir, "hosts"), HOSTS);
  const port = await freePort(HOST);
  const env = new Map(image.env.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
  env.set("PORT", String(port)).set("HOST", HOST).set("WORKSPACE", workspace);

  const args = ["--bind", image.rootfs, "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", workspace, workspace];
  args.push("--ro-bind", join(dir, "hosts"), "/etc/hosts");
  args.push("--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--clearenv");
  for (const [name, value] of env) args.push("--setenv", name, value);
  args.push("--chdir", image.workingDir, "--", ...image.entrypoint, ...(options.command ?? image.cmd));

  // Joining the groups first (a shell that writes its pid into each, then becomes bwrap) counts everything the container runs.
  const groups = options.procsFiles ?? [];
  const [program, programArgs] = groups.length === 0 ? ["bwrap", args] : ["/bin/sh", ["-c", JOIN_THEN_BWRAP, "sh", String(groups.length), ...groups, ...args]];
  const startedAt = performance.now();
  const child = spawn(program, programArgs, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitForListening(port, { host: HOST, timeoutMs: 20_000, abandon: exited, intervalMs: options.pollMs ?? 15 });
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the image's server did not start: ${(error as Error).message}\n${output}`);
  }
  const listeningAt = performance.now();
  return {
    url: `http://${HOST}:${port}`,
    workspace,
    home: env.get("SANDBOX_HOME") ?? workspace,
    pid: child.pid!,
    startedAt,
    listeningAt,
    async close() {
      // As an engine stops a container: SIGTERM to its PID 1 (tini, which passes it on), then SIGKILL.
      const init = childrenOf(child.pid!)[0];
      if (init !== undefined && child.exitCode === null) process.kill(init, "SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The pids of `pid`'s children, as this (the host's) process namespace numbers them. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
