/**
 * The Python client's copy of the error codes (clients/python/src/edge_sandbox/_error_codes.py)
 * against the one table, protocol/errors.ts: the same codes with the same HTTP statuses, in the same
 * order, so a code added, renamed or re-statused here fails until the Python client has it too.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { SYSTEM_PYTHON } from "../../scripts/os-packages/packages.ts";

const PYTHON_CODES = fileURLToPath(new URL("../../clients/python/src/edge_sandbox/_error_codes.py", import.meta.url));

/** The table as the Python file declares it, read by Python itself (the file alone: no package imports). */
function pythonCodes(): [string, number][] {
  const program = "import json, runpy, sys; print(json.dumps(list(runpy.run_path(sys.argv[1])['ERROR_CODES'].items())))";
  const run = spawnSync(SYSTEM_PYTHON, ["-c", program, PYTHON_CODES], { encoding: "utf8", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });
  if (run.status !== 0) throw new Error(`${SYSTEM_PYTHON} could not read ${PYTHON_CODES}:\n${run.stderr}`);
  return JSON.parse(run.stdout) as [string, number][];
}

describe("the Python client's error codes", () => {
  it("are protocol/errors.ts's, with their statuses", () => {
    const expected = Object.entries(ERROR_CODES);
    // On a mismatch, the lines the Python table should have.
    const lines = expected.map(([code, status]) => `    "${code}": ${status},`).join("\n");
    expect(pythonCodes(), `clients/python/src/edge_sandbox/_error_codes.py should read:\n${lines}`).toEqual(expected);
  });
});
