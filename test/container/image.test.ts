/**
 * What only the built image can show: its server as a container starts it, with the image's programs.
 * Runs under `npm run test:image` (against the image's server); elsewhere there is no image to check.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, startTestServer, type TestServer } from "./helpers.ts";
import { testImage } from "./image-server.ts";

describe.skipIf(testImage() === undefined)("the production image", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  const run = async (command: string) => (await call(t.url, "POST", "/api/execute", { command })).body as { exitCode: number; stdout: string; stderr: string };

  it("runs tini as PID 1, with the server as its child", async () => {
    const { stdout } = await run('cat /proc/1/comm; ps_parent=$(awk "{print \\$4}" /proc/$PPID/stat); echo "$ps_parent"; cat /proc/$PPID/comm');
    expect(stdout.split("\n").slice(0, 3)).toEqual(["tini", "1", "node"]);
  });

  it("reaps orphans: a command's background child that outlives it leaves no zombie", async () => {
    expect((await run("(sleep 0.2 &); echo started")).stdout).toBe("started\n");
    const zombies = async () => (await run("grep -ls '^State:[[:space:]]*Z' /proc/[0-9]*/status || true")).stdout.trim();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await eventually(async () => (await zombies()) === "", 3000)).toBe(true);
  });

  it("starts the server on the image's environment: commands see the image's ENV (its base's too), not the server's own", async () => {
    const { stdout } = await run("tr '\\0' '\\n' < /proc/$PPID/environ");
    const names = stdout.trim().split("\n").map((line) => line.slice(0, line.indexOf("=")));
    expect(names).toEqual(expect.arrayContaining(["WORKSPACE", "NODE_VERSION", "DEBIAN_FRONTEND"]));
    const seen = await run('printenv DEBIAN_FRONTEND NODE_VERSION >/dev/null && echo image; for v in PORT HOST WORKSPACE SANDBOX_HOME NODE_ENV SANDBOX_IMAGE_ENV; do printenv "$v" >/dev/null && echo "leaked $v"; done; echo end');
    expect(seen.stdout).toBe("image\nend\n");
  });

  it("has the programs commands and the code interpreter expect", async () => {
    const result = await run('for p in bash git curl python3 ps top vi; do command -v "$p" >/dev/null || echo "missing $p"; done; python3 -c "import matplotlib, numpy, pandas"');
    expect(result).toMatchObject({ exitCode: 0, stdout: "", stderr: "" });
  });

  it("draws matplotlib figures as PNG, PDF and SVG without the packages it leaves out, and keeps apt's books whole", async () => {
    const draw = [
      "import matplotlib.pyplot as plt, os",
      "fig, ax = plt.subplots(); ax.plot([1, 3, 2]); ax.set_title('∑ π')",
      "[fig.savefig(f'/tmp/figure.{kind}') for kind in ('png', 'pdf', 'svg')]",
      "print(plt.get_backend(), all(os.path.getsize(f'/tmp/figure.{kind}') > 1000 for kind in ('png', 'pdf', 'svg')))",
    ].join("\n");
    expect(await run(`python3 -c "${draw}"`)).toMatchObject({ exitCode: 0, stdout: "agg True\n" });
    // Left out for real (Tk, sympy, SciPy), yet apt sees every dependency met.
    expect((await run('python3 -c "import tkinter" 2>&1; python3 -c "import sympy" 2>&1; python3 -c "import scipy" 2>&1')).stdout).toMatch(/No module named '_?tkinter'[\s\S]*No module named 'sympy'[\s\S]*No module named 'scipy'/);
    expect(await run("apt-get check -q >/dev/null && dpkg --audit && echo whole")).toMatchObject({ exitCode: 0, stdout: "whole\n" });
  });

  it("runs a terminal (the PTY library's prebuilt binary is installed)", async () => {
    const created = await call(t.url, "POST", "/api/terminals", { command: "echo pty-$((6*7)); exit 4", cols: 80, rows: 24 });
    expect(created.status).toBe(200);
    const id = created.body.terminal.id as string;
    expect((await call(t.url, "GET", `/api/terminals/${id}/wait`)).body.terminal).toMatchObject({ status: "exited", exitCode: 4 });
    const output = await call(t.url, "GET", `/api/terminals/${id}/output?since=0`);
    expect(Buffer.from(output.body.data, "base64").toString("utf8")).toContain("pty-42");
  });
});
