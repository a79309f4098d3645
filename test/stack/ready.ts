/**
 * Setup file of every stack test file: waits until the shared stack answers before the file's
 * tests run (the global setup starts it without waiting), and fails with the stack's output if it
 * exits or does not answer in time.
 */
import { beforeAll, inject } from "vitest";
import { STACK_EXITED } from "./stack-log.ts";

const READY_TIMEOUT_MS = 120_000;

/** The stack's output so far (Node's fs, without naming Node's types: these files are typechecked as web code). */
function stackOutput(): string {
  const fs = (process as unknown as { getBuiltinModule(id: "node:fs"): { readFileSync(path: string, encoding: "utf8"): string } }).getBuiltinModule("node:fs");
  return fs.readFileSync(inject("stackLog"), "utf8");
}

beforeAll(async () => {
  const url = inject("stackUrl");
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2_000) })).ok) return;
    } catch {
      // not up yet
    }
    if (stackOutput().includes(STACK_EXITED)) throw new Error(`the shared stack exited before it answered:\n${stackOutput()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the shared stack did not answer on ${url} in time; its output:\n${stackOutput()}`);
}, READY_TIMEOUT_MS + 5_000);
