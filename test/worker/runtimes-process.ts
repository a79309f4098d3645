/**
 * The workers project's runtimes, in a process of their own that global-setup.ts starts: as
 * `npm run runtime` does, a root one first enters a mount namespace of its own
 * (runtime/mount-namespace.ts), so the sandboxes' disks its runtimes mount exist there alone, and a
 * test run killed outright leaves none mounted on the host (the namespace goes with the last of its
 * processes, its container servers stopping once it is gone). In vitest's own process the runtimes
 * would mount them where the host sees them: a Node process cannot leave its mount namespace.
 *
 * It reads what to start as the first line of its stdin (each runtime's options by name, JSON: the
 * shared secret stays off its command line), writes each one's URL and engine socket as one JSON
 * line on stdout, and closes them all when its stdin closes (the test run ended, or died).
 */
import { createInterface } from "node:readline";
import { enterOwnMountNamespace } from "../../runtime/mount-namespace.ts";
import type { RunningRuntime, RuntimeOptions } from "../../runtime/server.ts";

/** What global-setup.ts reads back, by runtime. */
export interface StartedRuntime {
  url: string;
  /** Its Docker engine's socket. */
  engine: string;
}

// Re-executes this process in its namespace, or returns where it cannot (not root): the runtimes then
// run where they are. The runtime's modules are loaded after, once: they take seconds.
enterOwnMountNamespace();
const { startRuntime } = await import("../../runtime/server.ts");

const running: RunningRuntime[] = [];
let closing = false;
/** Closes the runtimes started and ends (a start under way ends with the process). */
async function close(code = 0): Promise<void> {
  if (closing) return;
  closing = true;
  await Promise.all(running.map((runtime) => runtime.close()));
  process.exit(code);
}
process.on("SIGTERM", () => void close());

const input = createInterface({ input: process.stdin });
input.once("close", () => void close());
const asked = JSON.parse(await new Promise<string>((resolve) => input.once("line", resolve))) as Record<string, RuntimeOptions>;
const started: Record<string, StartedRuntime> = {};
try {
  for (const [name, options] of Object.entries(asked)) {
    const runtime = await startRuntime(options);
    running.push(runtime);
    started[name] = { url: runtime.url, engine: runtime.engine.path };
  }
} catch (error) {
  console.error(`test runtimes: ${(error as Error).stack}`);
  await close(1);
}
process.stdout.write(`${JSON.stringify(started)}\n`);
