/**
 * Watches the container servers as the local runtime reports them (its pool's run of each sandbox
 * folder): one that dies without being asked to stop (the runtime is told of sleeps and destroys) is
 * said in a health line, and so is its return. The Durable Object notices the exit through the
 * runtime and starts a new server on the sandbox's next call; this makes that visible.
 */
import { readdirSync } from "node:fs";
import type { RunningRuntime } from "../../runtime/server.ts";

export interface ContainerWatch {
  /** Tells the watch a caller asked this sandbox's container to stop: its exit is no crash. */
  stopAsked(key: string): void;
  stop(): void;
}

export function watchContainers(runtime: () => RunningRuntime | undefined, say: (line: string) => void, everyMs = 1_000): ContainerWatch {
  const running = new Map<string, string>(); // key → run id last seen running
  const asked = new Set<string>();
  const died = new Set<string>();
  const timer = setInterval(() => {
    const current = runtime();
    if (!current) return;
    let keys: string[];
    try {
      keys = readdirSync(current.dataDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
        .map((entry) => entry.name);
    } catch {
      return;
    }
    for (const key of keys) {
      const info = current.pool.info(key);
      const seen = running.get(key);
      if (info.running && info.runId !== undefined) {
        if (seen !== info.runId && died.delete(key)) say(`  health: sandbox ${key}'s container server is back (pid ${info.pid})`);
        running.set(key, info.runId);
      } else if (seen !== undefined) {
        running.delete(key);
        if (asked.delete(key)) continue;
        died.add(key);
        const how = info.signal ?? `exit code ${info.exitCode ?? "unknown"}`;
        say(`  health: sandbox ${key}'s container server died (${how}) without being asked to stop; the sandbox's next call starts a new one`);
      }
    }
  }, everyMs);
  timer.unref();
  return {
    stopAsked: (key) => asked.add(key),
    stop: () => clearInterval(timer),
  };
}
