/**
 * The Python client (clients/python) against the real stack: the package is installed the way its
 * users install it offline (`pip install --no-build-isolation`, into a venv that sees Debian's
 * httpx), and its pytest suite runs against the shared stack and, for the resume tests, through a
 * proxy that cuts event streams at random bytes (and one that loses an answer). Each pytest test is reported here as a test of its
 * own, by its pytest id, so a failure shows by name with pytest's account of it.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SYSTEM_PYTHON } from "../../scripts/os-packages/packages.ts";
import { startCuttingProxy, type CuttingProxy } from "../cutting-proxy.ts";

const PACKAGE = fileURLToPath(new URL("../../clients/python", import.meta.url));
const RUN_TIMEOUT_MS = 600_000;
/** Python writes no caches into the repository (tests run from a copy; collection from the source). */
const QUIET_PYTHON = { PYTHONDONTWRITEBYTECODE: "1" };

interface Outcome {
  nodeid: string;
  when: string;
  outcome: string;
  details: string;
}

/** The pytest ids of the suite, collected from the source tree (no service needed to collect). */
function collect(): { ids: string[]; error?: string } {
  const run = spawnSync(SYSTEM_PYTHON, ["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"], {
    cwd: PACKAGE,
    env: { ...process.env, ...QUIET_PYTHON, PYTHONPATH: join(PACKAGE, "src") },
    encoding: "utf8",
  });
  const ids = run.stdout.split("\n").filter((line) => line.includes("::"));
  return run.status === 0 && ids.length > 0 ? { ids } : { ids, error: `pytest --collect-only failed (${run.status}):\n${run.stdout}\n${run.stderr}` };
}

/** Runs a program to its end; rejects with its output when it fails. */
function run(program: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: options.cwd, env: { ...process.env, ...QUIET_PYTHON, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(output) : reject(new Error(`${program} ${args.join(" ")} exited ${code}:\n${output}`))));
  });
}

const collected = collect();
const work = mkdtempSync(join(tmpdir(), "python-client-"));
const outcomes = new Map<string, Outcome[]>();
let proxy: CuttingProxy | undefined;
let losing: CuttingProxy | undefined;
let pytestOutput = "";

beforeAll(async () => {
  // A copy, so that building the package and running its tests leave nothing in the repository.
  const copy = join(work, "package");
  cpSync(PACKAGE, copy, { recursive: true, filter: (source) => !/(__pycache__|\.egg-info|\/build)$/.test(source) });
  const venv = join(work, "venv");
  // Debian's httpx and pytest come through --system-site-packages; nothing is fetched.
  await run(SYSTEM_PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", venv]);
  const python = join(venv, "bin", "python");
  await run(python, ["-m", "pip", "install", "--no-build-isolation", "--no-index", "--disable-pip-version-check", copy]);
  // Every event stream through the proxy is cut after a random number of bytes, again and again.
  proxy = await startCuttingProxy(inject("stackUrl"), { cutAfterBytes: () => 500 + Math.floor(Math.random() * 6000) });
  // The first connection through this one loses its answer after the request reached the service.
  losing = await startCuttingProxy(inject("stackUrl"), { cutBeforeAnswer: (connection) => (connection === 0 ? "at-answer" : undefined) });
  const report = join(work, "report.jsonl");
  try {
    pytestOutput = await run(python, ["-m", "pytest", "-p", "no:cacheprovider", "-q", "tests"], {
      cwd: copy,
      env: {
        EDGE_SANDBOX_URL: inject("stackUrl"),
        EDGE_SANDBOX_TOKEN: inject("stackToken"),
        EDGE_SANDBOX_CUT_URL: proxy.url,
        EDGE_SANDBOX_LOSING_URL: losing.url,
        EDGE_SANDBOX_TEST_REPORT: report,
        // The installed package, never the copy's source.
        PYTHONSAFEPATH: "1",
      },
    });
  } catch (error) {
    // Failed tests are reported one by one below; the output is kept for tests that did not report.
    pytestOutput = (error as Error).message;
  }
  if (existsSync(report)) {
    for (const line of readFileSync(report, "utf8").split("\n").filter(Boolean)) {
      const outcome = JSON.parse(line) as Outcome;
      outcomes.set(outcome.nodeid, [...(outcomes.get(outcome.nodeid) ?? []), outcome]);
    }
  }
}, RUN_TIMEOUT_MS);

afterAll(async () => {
  await proxy?.close();
  await losing?.close();
  rmSync(work, { recursive: true, force: true });
});

describe("the Python client (pytest, against the stack)", () => {
  it("has a test suite pytest can collect", () => {
    expect(collected.error).toBeUndefined();
  });

  it("is imported from the installed package, not from its source", async () => {
    const where = await run(join(work, "venv", "bin", "python"), ["-P", "-c", "import edge_sandbox; print(edge_sandbox.__file__)"], { cwd: work });
    expect(where).toContain(join(work, "venv"));
    expect(existsSync(join(work, "venv", "lib"))).toBe(true);
  });

  for (const id of collected.ids) {
    it(id, () => {
      const reports = outcomes.get(id);
      if (!reports) expect.fail(`pytest reported nothing for ${id}:\n${pytestOutput.slice(-4000)}`);
      const failed = reports.find((report) => report.outcome !== "passed");
      expect(failed?.outcome ?? "passed", failed ? `${failed.when}: ${failed.details}` : "").toBe("passed");
    });
  }
});
