/**
 * Cloudflare's Bridge API on our Worker, driven by a real Bridge client: `@computesdk/cloudflare`
 * (ComputeSDK's Cloudflare provider in its remote mode) pointed at the shared `npm start` stack runs
 * create, commands (foreground, background, streaming callbacks, timeout), its filesystem calls and
 * destroy. Plain HTTP checks cover what that client does not send: the event stream as it is framed,
 * sessions, raw bytes, workspace archives (persist, hydrate), errors and the routes answered 501.
 */
import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import { cloudflare } from "@computesdk/cloudflare";
import WebSocket from "ws";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { previewFetch } from "../preview-fetch.ts";

const url = () => inject("stackUrl");
const token = () => inject("stackToken");
const provider = () => cloudflare({ sandboxUrl: url(), sandboxApiKey: token() });
const auth = () => ({ authorization: `Bearer ${token()}` });

/** A fresh Bridge sandbox, created by the client itself (`POST /v1/sandbox`). */
async function newSandbox(options?: { envs?: Record<string, string> }) {
  return provider().sandbox.create(options);
}

/**
 * A fresh Bridge sandbox whose commands run under bubblewrap (set through our own API), for commands
 * that leave a daemon behind (ComputeSDK's output daemon): under the local runtime without isolation
 * it would outlive the sandbox, as it cannot in a container.
 */
async function newConfinedSandbox() {
  const sandbox = await newSandbox();
  const configured = await bridge(`/v1/sandboxes/${sandbox.sandboxId}/config`, {
    method: "PATCH",
    body: JSON.stringify({ isolation: "bwrap" }),
    headers: { "content-type": "application/json" },
  });
  expect(configured.status).toBe(204);
  return sandbox;
}

function bridge(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url()}${path}`, { ...init, headers: { ...auth(), ...(init.headers as Record<string, string> | undefined) } });
}

/** The named events of a Bridge exec stream, in order. */
async function execEvents(sandboxId: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await bridge(`/v1/sandbox/${sandboxId}/exec`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("event:"))
    .map((frame) => {
      const [eventLine, ...dataLines] = frame.split("\n");
      return { event: eventLine!.slice("event: ".length), data: dataLines.map((line) => line.slice("data: ".length)).join("\n") };
    });
}

const decode = (base64: string) => new TextDecoder().decode(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
/** All of a command's stdout: output may come in more than one event. */
const stdoutOf = (events: { event: string; data: string }[]) =>
  events
    .filter((e) => e.event === "stdout")
    .map((e) => decode(e.data))
    .join("");

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe.concurrent("@computesdk/cloudflare against our Worker", () => {
  it("creates a sandbox with a Bridge id and runs commands in the foreground", async () => {
    const sandbox = await newSandbox();
    expect(sandbox.sandboxId).toMatch(/^[a-z2-7]{26}$/);
    const node = await sandbox.runCommand("node -v");
    expect(node).toMatchObject({ exitCode: 0, stderr: "" });
    expect(node.stdout).toMatch(/^v\d+\.\d+\.\d+\n$/);

    const mixed = await sandbox.runCommand("echo out; echo 'π err' >&2; exit 3");
    expect(mixed).toMatchObject({ stdout: "out\n", stderr: "π err\n", exitCode: 3 });

    expect(await sandbox.getInfo()).toMatchObject({ id: sandbox.sandboxId, provider: "cloudflare", status: "running" });
    const again = await provider().sandbox.getById(sandbox.sandboxId);
    expect((await again!.runCommand("echo again")).stdout).toBe("again\n");
    await sandbox.destroy();
  });

  it("passes env (at create and per command) and cwd", async () => {
    const sandbox = await newSandbox({ envs: { FROM_CREATE: "created" } });
    await sandbox.runCommand("mkdir -p sub");
    const result = await sandbox.runCommand('echo "$FROM_CREATE $PER_CALL"; pwd', { env: { PER_CALL: "it's per call" }, cwd: "/workspace/sub" });
    expect(result.exitCode).toBe(0);
    const [vars, pwd] = result.stdout.split("\n");
    expect(vars).toBe("created it's per call");
    expect(pwd).toMatch(/\/workspace\/sub$/);
    await sandbox.destroy();
  });

  it("runs a command in the background: runCommand returns while it runs on", async () => {
    const sandbox = await newSandbox();
    // The client backgrounds the command line as it is (`nohup <command> … &`): one simple command.
    const result = await sandbox.runCommand("sh -c 'sleep 3; echo finished > finished.txt'", { background: true });
    expect(result.exitCode).toBe(0);
    expect(await sandbox.filesystem.exists("finished.txt")).toBe(false);
    expect(await eventually(() => sandbox.filesystem.exists("finished.txt"))).toBe(true);
    expect(await sandbox.filesystem.readFile("/workspace/finished.txt")).toBe("finished\n");
    await sandbox.destroy();
  });

  it("opens a port with getUrl (a tunnel: our preview port) that serves programs without the API token", async () => {
    const sandbox = await newSandbox();
    await sandbox.filesystem.writeFile("/workspace/preview-server.cjs", PREVIEW_SERVER_SOURCE);
    await sandbox.runCommand("sh -c 'exec node preview-server.cjs 0 > server.log'", { background: true });
    let port = 0;
    const listening = await eventually(async () => {
      const log = await sandbox.filesystem.readFile("/workspace/server.log").catch(() => "");
      port = Number(/listening (\d+)/.exec(log)?.[1] ?? 0);
      return port > 0;
    });
    expect(listening).toBe(true);

    const tunnelUrl = await sandbox.getUrl({ port });
    // A host of the port's own: the service is on loopback, so <port>-<id>.localhost on its port.
    const tunnelHost = `${port}-${sandbox.sandboxId}.localhost:${new URL(url()).port}`;
    expect(tunnelUrl.startsWith(`http://${tunnelHost}/?token=`)).toBe(true);
    const page = await previewFetch(tunnelUrl.replace("/?token=", "/info?token="));
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ method: "GET", path: "/info" });
    // Without its token the address refuses; asking again reuses the tunnel.
    expect((await previewFetch(tunnelUrl.replace(/\?token=.*$/, "info"))).status).toBe(401);
    const again = await bridge(`/v1/sandbox/${sandbox.sandboxId}/tunnel/${port}`, { method: "POST" });
    expect(await again.json()).toMatchObject({ port, url: tunnelUrl, hostname: tunnelHost, createdAt: expect.any(String) });

    expect((await bridge(`/v1/sandbox/${sandbox.sandboxId}/tunnel/${port}`, { method: "DELETE" })).status).toBe(204);
    expect((await previewFetch(tunnelUrl.replace("/?token=", "/info?token="))).status).toBe(404);
    expect((await bridge(`/v1/sandbox/${sandbox.sandboxId}/tunnel/${port}`, { method: "DELETE" })).status).toBe(204);
    const reserved = await bridge(`/v1/sandbox/${sandbox.sandboxId}/tunnel/80`, { method: "POST" });
    expect(reserved.status).toBe(400);
    expect(await reserved.json()).toMatchObject({ code: "invalid_request" });
    await sandbox.destroy();
  });

  it("delivers output to streaming callbacks", async () => {
    const sandbox = await newConfinedSandbox();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const result = await sandbox.runCommand("echo first; echo second >&2; echo third", {
      onStdout: (chunk: string) => stdout.push(chunk),
      onStderr: (chunk: string) => stderr.push(chunk),
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "first\nthird\n", stderr: "second\n" });
    expect(stdout.join("")).toBe("first\nthird\n");
    expect(stderr.join("")).toBe("second\n");
    await sandbox.destroy();
  });

  it("ends a command at its timeout", async () => {
    const sandbox = await newSandbox();
    // The sleep outlasts the test: only the timeout can end the command.
    const result = await sandbox.runCommand("echo before; sleep 1000; echo after", { timeout: 500 });
    expect(result.stdout).toBe("before\n");
    expect(result.exitCode).toBe(124);
    await sandbox.destroy();
  });

  // The file routes take /workspace paths; mkdir, readdir, exists and remove are shell commands run in
  // /workspace, so relative paths name the same files under the local runtime too (where a command
  // naming /workspace would name the machine's own).
  it("writes, reads, lists, checks and removes files", async () => {
    const sandbox = await newSandbox();
    const { filesystem } = sandbox;
    await filesystem.mkdir("docs/deep");
    await filesystem.writeFile("/workspace/docs/deep/note.md", "# héllo\nwörld\n");
    expect(await filesystem.readFile("/workspace/docs/deep/note.md")).toBe("# héllo\nwörld\n");
    expect(await filesystem.exists("docs/deep/note.md")).toBe(true);
    const entries = await filesystem.readdir("docs/deep");
    expect(entries.find((entry) => entry.name === "note.md")).toMatchObject({ type: "file", size: Buffer.byteLength("# héllo\nwörld\n") });
    await filesystem.remove("docs");
    expect(await filesystem.exists("docs/deep/note.md")).toBe(false);
    await expect(filesystem.readFile("/workspace/docs/deep/note.md")).rejects.toThrow(/404/);
    await sandbox.destroy();
  });

  it("destroys the sandbox's container: its processes end, the next call starts a fresh one", async () => {
    const sandbox = await newSandbox();
    await sandbox.runCommand("true");
    const before = (await (await bridge(`/v1/sandboxes/${sandbox.sandboxId}`)).json()) as { generation: string };
    await sandbox.destroy();
    const after = (await (await bridge(`/v1/sandboxes/${sandbox.sandboxId}`)).json()) as { generation: string };
    expect(after.generation).not.toBe(before.generation);
    await sandbox.destroy();
  });
});

describe.concurrent("the Bridge API as it is framed", () => {
  it("streams exec output as base64 stdout and stderr events, then exit with exit_code", async () => {
    const { sandboxId } = await newSandbox();
    const events = await execEvents(sandboxId, { argv: ["sh", "-c", "printf 'a\\n'; printf 'b' >&2; exit 5"] });
    expect(events.filter((e) => e.event === "stdout").map((e) => decode(e.data)).join("")).toBe("a\n");
    expect(events.filter((e) => e.event === "stderr").map((e) => decode(e.data)).join("")).toBe("b");
    expect(events.at(-1)).toEqual({ event: "exit", data: JSON.stringify({ exit_code: 5 }) });
  });

  it("runs argv as given, and sends binary output byte for byte", async () => {
    const { sandboxId } = await newSandbox();
    const events = await execEvents(sandboxId, { argv: ["printf", "%s|%s", "two words", "$HOME"] });
    expect(events.filter((e) => e.event === "stdout").map((e) => decode(e.data)).join("")).toBe("two words|$HOME");
    const binary = await execEvents(sandboxId, { argv: ["head", "-c", "256", "/dev/urandom"] });
    const bytes = binary.filter((e) => e.event === "stdout").reduce((n, e) => n + atob(e.data).length, 0);
    expect(bytes).toBe(256);
  });

  it("ends with an error event when the command cannot start", async () => {
    const { sandboxId } = await newSandbox();
    const events = await execEvents(sandboxId, { argv: ["no-such-program-here"] });
    expect(events.at(-1)!.event).toBe("error");
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ error: expect.stringContaining("no-such-program-here"), code: expect.any(String) });
  });

  it("keeps cd and export in a session named by Session-Id, and not without one", async () => {
    const { sandboxId } = await newSandbox();
    const created = await bridge(`/v1/sandbox/${sandboxId}/session`, { method: "POST", body: JSON.stringify({ id: "work" }), headers: { "content-type": "application/json" } });
    expect(await created.json()).toEqual({ id: "work" });
    const inSession = { "Session-Id": "work" };
    await execEvents(sandboxId, { argv: ["mkdir", "-p", "inner"] });
    await execEvents(sandboxId, { argv: ["cd", "inner"] }, inSession);
    await execEvents(sandboxId, { argv: ["export", "KEPT=yes"] }, inSession);
    const pwd = await execEvents(sandboxId, { argv: ["sh", "-c", 'pwd; echo "$KEPT"'] }, inSession);
    expect(stdoutOf(pwd)).toMatch(/\/inner\nyes\n$/);
    const fresh = await execEvents(sandboxId, { argv: ["sh", "-c", 'pwd; echo "[$KEPT]"'] });
    expect(stdoutOf(fresh)).toMatch(/\/workspace\n\[\]\n$/);
    const deleted = await bridge(`/v1/sandbox/${sandboxId}/session/work`, { method: "DELETE" });
    expect(await deleted.json()).toMatchObject({ success: true, sessionId: "work" });
  });

  it("moves raw bytes both ways through /file/, anywhere in the sandbox", async () => {
    // In a container, so the paths outside /workspace are the sandbox's own.
    const { sandboxId } = await newConfinedSandbox();
    const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256);
    const put = await bridge(`/v1/sandbox/${sandboxId}/file/workspace/bin/data.bin`, { method: "PUT", body: bytes });
    expect(await put.json()).toEqual({ ok: true });
    const got = await bridge(`/v1/sandbox/${sandboxId}/file/workspace/bin/data.bin`);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(bytes);

    // Outside /workspace too (the Bridge itself refuses those): the sandbox's /tmp, its system files.
    const scratch = "tmp/bridge/x.bin";
    expect(await (await bridge(`/v1/sandbox/${sandboxId}/file/${scratch}`, { method: "PUT", body: bytes.subarray(0, 10) })).json()).toEqual({ ok: true });
    expect(new Uint8Array(await (await bridge(`/v1/sandbox/${sandboxId}/file/${scratch}`)).arrayBuffer())).toEqual(bytes.subarray(0, 10));
    expect((await bridge(`/v1/sandbox/${sandboxId}/file/etc/passwd`)).status).toBe(200);
    // Never the sandbox's server itself.
    const server = await bridge(`/v1/sandbox/${sandboxId}/file/proc/self/environ`);
    expect(server.status).toBe(403);
    expect(await server.json()).toMatchObject({ code: "permission_denied" });
    const missing = await bridge(`/v1/sandbox/${sandboxId}/file/workspace/nothing.txt`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "workspace_read_not_found", error: expect.any(String) });
  });

  it("refuses requests without our token, in the Bridge's error shape", async () => {
    const response = await fetch(`${url()}/v1/sandbox`, { method: "POST" });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: expect.any(String), code: "unauthorized" });
    const invalid = await bridge(`/v1/sandbox/abc/exec`, { method: "POST", body: JSON.stringify({ argv: [] }), headers: { "content-type": "application/json" } });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ code: "invalid_request" });
    expect(await (await fetch(`${url()}/health`)).json()).toEqual({ ok: true });
  });

  it("persists a workspace as a plain tar (excludes left out) and hydrates another from it", async () => {
    const { sandboxId: from } = await newSandbox();
    const { sandboxId: to } = await newSandbox();
    for (const [path, body] of [["workspace/keep/a.txt", "kept"], ["workspace/__pycache__/x.pyc", "dropped"]] as const) {
      expect((await bridge(`/v1/sandbox/${from}/file/${path}`, { method: "PUT", body })).status).toBe(200);
    }
    const persisted = await bridge(`/v1/sandbox/${from}/persist?excludes=__pycache__`, { method: "POST" });
    expect(persisted.status).toBe(200);
    const tar = new Uint8Array(await persisted.arrayBuffer());
    expect(new TextDecoder().decode(tar.subarray(257, 262))).toBe("ustar");
    expect((await bridge(`/v1/sandbox/${from}/persist?excludes=../x`)).status).toBe(400);

    const hydrated = await bridge(`/v1/sandbox/${to}/hydrate`, { method: "POST", body: tar, headers: { "content-type": "application/octet-stream" } });
    expect(await hydrated.json()).toEqual({ ok: true });
    expect(await (await bridge(`/v1/sandbox/${to}/file/workspace/keep/a.txt`)).text()).toBe("kept");
    expect((await bridge(`/v1/sandbox/${to}/file/workspace/__pycache__/x.pyc`)).status).toBe(404);
    const empty = await bridge(`/v1/sandbox/${to}/hydrate`, { method: "POST" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ code: "invalid_request" });
  });

  it("opens the session's terminal over the Bridge's pty WebSocket, which outlives the connection", async () => {
    const { sandboxId } = await newSandbox();
    const ptyUrl = `${url().replace(/^http/, "ws")}/v1/sandbox/${sandboxId}/pty?cols=100&rows=30`;
    /** Opens the socket; `until` resolves with what arrived once the output (or a text frame) matches. */
    const open = () => {
      const socket = new WebSocket(ptyUrl, { headers: auth() });
      let output = "";
      const texts: string[] = [];
      const waiters: { test: () => boolean; resolve: () => void }[] = [];
      const check = () => waiters.splice(0).forEach((w) => (w.test() ? w.resolve() : waiters.push(w)));
      socket.on("message", (data, isBinary) => {
        if (isBinary) output += data.toString();
        else texts.push(data.toString());
        check();
      });
      const until = (test: () => boolean) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out; output: ${JSON.stringify(output.slice(-300))}; texts: ${texts.join(" ")}`)), 15_000);
          waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
          check();
        });
      return { socket, until, output: () => output, texts };
    };

    const first = open();
    await first.until(() => first.texts.includes(JSON.stringify({ type: "ready" })));
    first.socket.send(Buffer.from("stty size; echo mark-$((6*7))\r"), { binary: true });
    await first.until(() => first.output().includes("mark-42"));
    expect(first.output()).toContain("30 100");
    first.socket.close();

    // A reconnect finds the same shell, with its output so far replayed.
    const second = open();
    await second.until(() => second.output().includes("mark-42"));
    second.socket.send(JSON.stringify({ type: "resize", cols: 90, rows: 20 }));
    second.socket.send(Buffer.from("stty size; exit 3\r"), { binary: true });
    await second.until(() => second.texts.some((text) => text.startsWith('{"type":"exit"')));
    expect(second.output()).toContain("20 90");
    expect(second.texts).toContain(JSON.stringify({ type: "exit", code: 3 }));
    second.socket.close();

    const refused = await bridge(`/v1/sandbox/${sandboxId}/pty`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "invalid_request" });
  });

  it("answers running without starting the container, and 501 not_implemented for what it does not have yet", async () => {
    const { sandboxId } = await newSandbox();
    const running = async () => (await (await bridge(`/v1/sandbox/${sandboxId}/running`)).json()) as { running: boolean };
    // Named, never used: nothing runs, and asking starts nothing.
    expect(await running()).toEqual({ running: false });
    expect(await running()).toEqual({ running: false });
    await execEvents(sandboxId, { argv: ["true"] });
    expect(await running()).toEqual({ running: true });
    for (const [method, path] of [
      ["POST", "mount"],
      ["POST", "unmount"],
    ] as const) {
      const response = await bridge(`/v1/sandbox/${sandboxId}/${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(501);
      expect(await response.json()).toMatchObject({ code: "not_implemented", error: expect.stringContaining("not available") });
    }
    // Destroyed: gone, and asking does not bring it back.
    expect((await bridge(`/v1/sandbox/${sandboxId}`, { method: "DELETE" })).status).toBe(204);
    expect(await running()).toEqual({ running: false });
    expect(await running()).toEqual({ running: false });
  });
});
