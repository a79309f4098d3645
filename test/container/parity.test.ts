/**
 * What a program sees inside a sandbox: the same facts locally and in the built image. One file, two
 * targets: under `npm test` a sandbox of the local runtime (its container on this machine's system
 * folders), under `npm run test:image` a sandbox of the same runtime on the built image's root file
 * system (SANDBOX_ROOTFS), with the image's own Node and server. No assertion knows which it runs on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { eventually } from "./helpers.ts";
import { startSandboxTarget, type SandboxTarget } from "./sandbox-target.ts";

interface ExecBody {
  exitCode: number;
  stdout: string;
  stderr: string;
}

describe.skipIf(!detectIsolation().bwrap.available && !process.env.CI)("inside a sandbox", () => {
  let target: SandboxTarget;
  beforeAll(async () => {
    target = await startSandboxTarget("parity");
  }, 60_000);
  afterAll(() => target?.close());

  const run = async (command: string, cwd?: string) => (await target.call("POST", "/api/execute", { command, ...(cwd ? { cwd } : {}) })).body as ExecBody;

  it("gives commands, code contexts and terminals the image's ENV, never the server's own variables", async () => {
    // DEBIAN_FRONTEND is the image's (container/Dockerfile); PORT, WORKSPACE, SANDBOX_HOME and NODE_ENV are set there for the server.
    const probe = 'printenv DEBIAN_FRONTEND; for v in PORT HOST WORKSPACE SANDBOX_HOME NODE_ENV SANDBOX_IMAGE_ENV SANDBOX_ID; do printenv "$v" && echo "leaked $v"; done; echo end';
    expect(await run(probe)).toMatchObject({ exitCode: 0, stdout: "noninteractive\nend\n" });

    const code = (await target.call("POST", "/api/code/run", {
      code: "import os\nprint(os.environ.get('DEBIAN_FRONTEND'), [n for n in ('PORT', 'WORKSPACE', 'NODE_ENV', 'SANDBOX_HOME') if n in os.environ])",
    })).body as { logs: { stdout: string[] } };
    expect(code.logs.stdout.join("")).toBe("noninteractive []\n");

    const created = await target.call("POST", "/api/terminals", { terminalId: "image-env", command: probe });
    expect(created.status).toBe(200);
    await target.call("POST", "/api/terminals/image-env/wait", {});
    // The terminal's last output may reach its log a moment after its exit is known.
    const output = async () => Buffer.from(((await target.call("GET", "/api/terminals/image-env/output")).body as { data: string }).data, "base64").toString("utf8").replace(/\r/g, "");
    await eventually(async () => (await output()).endsWith("end\n"), 5_000);
    expect(await output()).toBe("noninteractive\nend\n");
  });

  it("starts in /workspace, as root named root, with the image's HOME, PATH and hostname", async () => {
    const { stdout } = await run('pwd; id -u; id -un; id -gn; echo "$HOME"; echo "$PATH"; hostname; getent passwd root | cut -d: -f6');
    expect(stdout).toBe("/workspace\n0\nroot\nroot\n/root\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nsandbox\n/root\n");
  });

  it("has the image's folders, with the root, /tmp, /var/tmp, /root and the workspace writable", async () => {
    const dirs = "/workspace /tmp /var/tmp /root /var /home /opt /usr/local /etc /usr/bin";
    expect((await run(`for d in ${dirs}; do test -d "$d" || echo "missing $d"; done`)).stdout).toBe("");
    const write = await run("for d in '' /workspace /tmp /var/tmp /root; do echo hi > \"$d/parity-probe\" && cat \"$d/parity-probe\"; done");
    expect(write).toMatchObject({ exitCode: 0, stdout: "hi\nhi\nhi\nhi\nhi\n" });
    expect((await run("mkdir /parity-dir && touch /parity-dir/f && ls /parity-dir")).stdout).toBe("f\n");
    // System folders are the image's, not the sandbox's to change, nor to move or remove from the root.
    expect((await run("touch /usr/bin/parity-probe")).exitCode).not.toBe(0);
    const moved = await run("for d in /usr /etc /proc /dev /tmp /workspace /app; do mv \"$d\" /parity-moved 2>/dev/null && echo \"moved $d\"; rmdir \"$d\" 2>/dev/null && echo \"removed $d\"; done; ls /usr/bin/sh /etc/hostname >/dev/null && echo intact");
    expect(moved.stdout).toBe("intact\n");
  });

  it("names paths as the sandbox sees them in what the API returns", async () => {
    const started = (await target.call("POST", "/api/process/start", { command: "sleep 30", processId: "parity-paths" })).body;
    expect(started.process).toMatchObject({ id: "parity-paths" });
    const listed = (await target.call("POST", "/api/files/list", { path: "/workspace" })).body;
    expect(JSON.stringify(listed)).not.toContain(target.hostDir);
    const info = (await target.call("GET", "/api/info")).body;
    expect(JSON.stringify(info)).not.toContain(target.hostDir);
    expect(info).toMatchObject({ workspace: "/workspace" });
    await target.call("DELETE", "/api/process/parity-paths");
  });

  it("serves files anywhere in the sandbox as its commands see them, and refuses what they cannot write", async () => {
    const files = (op: string, body: unknown) => target.call("POST", `/api/files/${op}`, body);
    expect((await files("write", { path: "/tmp/parity-x/file.txt", content: "from the API" })).status).toBe(200);
    expect((await run("cat /tmp/parity-x/file.txt")).stdout).toBe("from the API");
    await run("echo from a command > /var/tmp/parity-y");
    expect((await files("read", { path: "/var/tmp/parity-y" })).body).toMatchObject({ path: "/var/tmp/parity-y", content: "from a command\n" });
    expect((await files("read", { path: "/etc/hostname" })).body.content).toBe((await run("cat /etc/hostname")).stdout);
    expect((await files("list", { path: "/tmp/parity-x" })).body.files.map((f: { absolutePath: string }) => f.absolutePath)).toEqual(["/tmp/parity-x/file.txt"]);
    expect((await files("move", { sourcePath: "/tmp/parity-x/file.txt", destinationPath: "/workspace/parity-moved.txt" })).status).toBe(200);
    expect((await run("cat parity-moved.txt")).stdout).toBe("from the API");
    // The container's root is writable, as a container's is; its system folders are read-only: a coded 403, as a command gets EROFS.
    expect((await files("write", { path: "/test-file.txt", content: "at the root" })).status).toBe(200);
    expect((await run("cat /test-file.txt")).stdout).toBe("at the root");
    expect((await files("mkdir", { path: "/parity-data/below", recursive: true })).status).toBe(200);
    expect((await run("test -d /parity-data/below && echo made")).stdout).toBe("made\n");
    const readOnly = { status: 403, body: { code: "PERMISSION_DENIED" } };
    expect(await files("mkdir", { path: "/usr/bin/parity-dir" })).toMatchObject(readOnly);
    expect((await run("test -e /usr/bin/parity-dir || echo absent")).stdout).toBe("absent\n");
    // The server's own process is not served, however it is named.
    for (const path of ["/proc/self/environ", "/proc/self/mem", "/dev/fd/0", "/dev/stdin"]) expect(await files("read", { path }), path).toMatchObject(readOnly);
  });

  it("keeps a daemon a command started, answering the next command on its port", async () => {
    const started = await run("nohup python3 -m http.server 8765 --bind 127.0.0.1 >/tmp/http.log 2>&1 & echo started");
    expect(started.stdout).toBe("started\n");
    // The next command: the daemon is still there, listening on the sandbox's own loopback.
    const fetched = await run("for i in $(seq 1 50); do curl -sf -o /dev/null http://127.0.0.1:8765/ && echo answered && break; sleep 0.1; done");
    expect(fetched.stdout).toBe("answered\n");
    const ps = await run("ps -eo args | grep -c '^python3 -m http.server 8765'");
    expect(ps.stdout).toBe("1\n");
  });

  it("sees its own processes only, under an init of its own", async () => {
    const { stdout } = await run("ps -eo pid= | wc -l; ps -o pid= -p 1");
    const [count, init] = stdout.trim().split("\n").map((line) => Number(line.trim()));
    expect(count).toBeLessThan(20);
    expect(init).toBe(1);
  });

  it("runs the server from its bundle in /app, beside the one package it cannot hold (the PTY library)", async () => {
    const { stdout } = await run("tr '\\0' ' ' < /proc/$PPID/cmdline; echo; echo $(ls /app); echo $(ls /app/node_modules); echo $(ls /app/node_modules/@lydell)");
    const [server, app, modules, pty] = stdout.trim().split("\n");
    expect(server).toMatch(/^\S*node .*\/app\/container\/main\.js $/);
    expect([app, modules]).toEqual(["container node_modules package.json", "@lydell"]);
    expect(pty).toMatch(/^node-pty node-pty-linux-\w+$/);
  });

  it("has the tools commands and the code interpreter expect", async () => {
    const result = await run('for p in bash sh git curl python3 node ps; do command -v "$p" >/dev/null || echo "missing $p"; done; node -e "process.stdout.write(process.versions.node.split(\'.\')[0])"; python3 -c "import numpy, pandas, matplotlib"');
    expect(result).toMatchObject({ exitCode: 0, stdout: "22", stderr: "" });
  });
});
