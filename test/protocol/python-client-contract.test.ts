/**
 * What the Python client (clients/python) copies of the contract, held to the contract: its error
 * codes (`edge_sandbox/_error_codes.py`) are protocol/errors.ts's with the same HTTP statuses, and
 * every request it makes is the verb and path of an API method's binding (src/rpc/bindings/). So a
 * code added, renamed or re-statused, or a route moved, fails here until the Python client follows.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { API_METHODS } from "../../src/rpc/bindings/index.ts";
import { SYSTEM_PYTHON } from "../../scripts/os-packages/packages.ts";

const PACKAGE = fileURLToPath(new URL("../../clients/python/src/edge_sandbox/", import.meta.url));

/** The table as the Python file declares it, read by Python itself (the file alone: no package imports). */
function pythonCodes(): [string, number][] {
  const program = "import json, runpy, sys; print(json.dumps(list(runpy.run_path(sys.argv[1])['ERROR_CODES'].items())))";
  const file = join(PACKAGE, "_error_codes.py");
  const run = spawnSync(SYSTEM_PYTHON, ["-c", program, file], { encoding: "utf8", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
  if (run.status !== 0) throw new Error(`${SYSTEM_PYTHON} could not read ${file}:\n${run.stderr}`);
  return JSON.parse(run.stdout) as [string, number][];
}

/** A path with its parameters made alike (`/processes/:pid` and `/processes/{segment(id)}` → `/processes/:`). */
const shape = (path: string) => path.replace(/:\w+|\{[^}]*\}/g, ":") || "/";

/** Every request the Python sources make: `Call("VERB", "path"…)` and stream reopenings (GET). */
function pythonRequests(): string[] {
  const requests: string[] = [];
  for (const file of readdirSync(PACKAGE).filter((name) => name.endsWith(".py"))) {
    const source = readFileSync(join(PACKAGE, file), "utf8");
    for (const match of source.matchAll(/Call\("([A-Z]+)", f?"([^"]*)"/g)) requests.push(`${match[1]} ${shape(match[2]!)}`);
    for (const match of source.matchAll(/resume_call\(f?"([^"]*)"/g)) requests.push(`GET ${shape(match[1]!)}`);
  }
  return requests;
}

describe("the Python client's copy of the contract", () => {
  it("has protocol/errors.ts's error codes, with their statuses", () => {
    const expected = Object.entries(ERROR_CODES);
    // On a mismatch, the lines the Python table should have.
    const lines = expected.map(([code, status]) => `    "${code}": ${status},`).join("\n");
    expect(pythonCodes(), `clients/python/src/edge_sandbox/_error_codes.py should read:\n${lines}`).toEqual(expected);
  });

  it("makes only requests that are bindings' verbs and paths", () => {
    const bound = new Set(Object.values(API_METHODS).map((binding) => `${binding.verb} ${shape(binding.path)}`));
    const requests = pythonRequests();
    // Every family the client offers is found (the pattern reads the sources as they are written).
    expect(requests.length).toBeGreaterThanOrEqual(30);
    expect(requests.filter((request) => !bound.has(request))).toEqual([]);
  });
});
