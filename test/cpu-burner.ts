/**
 * Load for tests that must hold under a busy machine: processes that spin on a core each, every one
 * bounded in time (it ends itself after `maxMs` even if the test that started it never stops it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";

export interface CpuBurner {
  stop(): Promise<void>;
}

export function burnCpu(options: { maxMs: number; processes?: number }): CpuBurner {
  const count = options.processes ?? availableParallelism();
  const script = `const end = Date.now() + ${Math.ceil(options.maxMs)}; while (Date.now() < end) {}`;
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) children.push(spawn(process.execPath, ["-e", script], { stdio: "ignore" }));
  return {
    async stop() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once("exit", () => resolve());
              child.kill("SIGKILL");
            }),
        ),
      );
    },
  };
}
