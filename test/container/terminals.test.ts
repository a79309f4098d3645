/**
 * Terminals on real pseudo-terminals at the container server: size and exit code, resize with
 * SIGWINCH, Ctrl-C, viewers that reconnect with a cursor and miss nothing, input over the WebSocket,
 * kills that reach the process group, full-screen programs (vim, top), and terminals under bwrap.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, groupMembers, startTestServer, type TestServer } from "./helpers.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const create = async (body: Record<string, unknown>) => {
  const reply = await call(t.url, "POST", "/api/terminals", body);
  expect(reply.status).toBe(200);
  return reply.body.terminal as { id: string; pid: number; cols: number; rows: number };
};
const outputText = async (id: string, since = 0) => {
  const { body } = await call(t.url, "GET", `/api/terminals/${id}/output?since=${since}`);
  return Buffer.from(body.data, "base64").toString("utf8");
};
const waitForOutput = (id: string, pattern: RegExp) => eventually(async () => pattern.test(await outputText(id)), 10_000);
const waitForExit = async (id: string) => (await call(t.url, "GET", `/api/terminals/${id}/wait`)).body.terminal;

interface Viewer {
  socket: WebSocket;
  text(): string;
  controls: Array<Record<string, any>>;
  lastCursor(): number;
  closed: Promise<void>;
}

function view(id: string, since?: number): Promise<Viewer> {
  const socket = new WebSocket(`${t.url.replace("http", "ws")}/api/terminals/${id}/ws${since === undefined ? "" : `?since=${since}`}`);
  socket.binaryType = "arraybuffer";
  const chunks: Buffer[] = [];
  const controls: Array<Record<string, any>> = [];
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string") controls.push(JSON.parse(event.data));
    else chunks.push(Buffer.from(event.data as ArrayBuffer));
  });
  const closed = new Promise<void>((resolve) => socket.addEventListener("close", () => resolve()));
  const viewer: Viewer = {
    socket,
    text: () => Buffer.concat(chunks).toString("utf8"),
    controls,
    lastCursor: () => controls.filter((frame) => frame.type === "cursor").at(-1)?.cursor ?? since ?? 0,
    closed,
  };
  return new Promise((resolve, reject) => {
    socket.addEventListener("open", () => resolve(viewer), { once: true });
    socket.addEventListener("error", () => reject(new Error("WebSocket failed")), { once: true });
  });
}

describe("terminals", () => {
  it("starts at the size asked for and reports the exit code", async () => {
    const terminal = await create({ command: "stty size; exit 7", cols: 101, rows: 33 });
    expect(terminal).toMatchObject({ cols: 101, rows: 33 });
    expect(terminal.pid).toBeGreaterThan(0);
    const done = await waitForExit(terminal.id);
    expect(done).toMatchObject({ status: "exited", exitCode: 7 });
    expect(await outputText(terminal.id)).toContain("33 101");
  });

  it("resizes: the program gets SIGWINCH and sees the new size", async () => {
    const terminal = await create({ command: "trap 'echo WINCH $(stty size)' WINCH; echo ready; while :; do sleep 0.05; done", cols: 80, rows: 24 });
    expect(await waitForOutput(terminal.id, /ready/)).toBe(true);
    const resized = await call(t.url, "POST", `/api/terminals/${terminal.id}/resize`, { cols: 132, rows: 43 });
    expect(resized.body.terminal).toMatchObject({ cols: 132, rows: 43 });
    expect(await waitForOutput(terminal.id, /WINCH 43 132/)).toBe(true);
    await call(t.url, "POST", `/api/terminals/${terminal.id}/kill?signal=SIGKILL`);
  });

  it("Ctrl-C interrupts the foreground job and leaves the shell", async () => {
    const terminal = await create({ cols: 80, rows: 24 });
    await call(t.url, "POST", `/api/terminals/${terminal.id}/write`, { data: "sleep 30; echo after-$((1+1))\r" });
    // The sleep must be the foreground job before the interrupt: the terminal's foreground group is
    // led by sleep itself. Before the shell's child has become sleep, it still has the shell's own
    // SIGINT handler, and an interrupt then is taken by it and lost, as it would be on a keyboard.
    expect(await eventually(() => childCount(terminal.pid) > 0 && commOf(foregroundGroup(terminal.pid)) === "sleep", 10_000)).toBe(true);
    await call(t.url, "POST", `/api/terminals/${terminal.id}/interrupt`);
    // As on a keyboard, the line discipline drops what was typed ahead of its Ctrl-C's handling: type
    // again once the shell has the terminal back.
    expect(await eventually(() => foregroundGroup(terminal.pid) === terminal.pid, 10_000)).toBe(true);
    await call(t.url, "POST", `/api/terminals/${terminal.id}/write`, { data: "echo alive-$((2+3))\r" });
    expect(await waitForOutput(terminal.id, /alive-5/)).toBe(true);
    expect(await outputText(terminal.id)).not.toContain("after-2");
    await call(t.url, "POST", `/api/terminals/${terminal.id}/write`, { data: "exit 3\r" });
    expect(await waitForExit(terminal.id)).toMatchObject({ exitCode: 3 });
  });

  it("a viewer that reconnects with its cursor gets exactly what it missed, beside a second viewer", async () => {
    const terminal = await create({ command: "echo go; read; for i in $(seq 1 300); do echo line-$i; done; sleep 0.2", cols: 80, rows: 24 });
    const first = await view(terminal.id);
    const second = await view(terminal.id, 0);
    expect(await eventually(() => first.text().includes("go"), 10_000)).toBe(true);
    first.socket.send(new TextEncoder().encode("\r"));
    expect(await eventually(() => first.text().includes("line-20\r\n"), 10_000)).toBe(true);
    first.socket.close();
    await first.closed;
    const seen = first.text();
    const cursor = first.lastCursor();
    const seenAtCursor = (await outputTextUpTo(terminal.id, cursor));
    const resumed = await view(terminal.id, cursor);
    await Promise.all([resumed.closed, second.closed]);
    const whole = await outputText(terminal.id);
    expect(whole).toContain("line-300\r\n");
    // What the first viewer had up to its cursor, plus what the resumed viewer got, is the whole output.
    expect(seen.startsWith(seenAtCursor)).toBe(true);
    expect(seenAtCursor + resumed.text()).toBe(whole);
    expect(second.text()).toBe(whole);
    expect(resumed.controls.at(-1)).toMatchObject({ type: "exit", exitCode: 0 });
    expect(second.controls.at(-1)).toMatchObject({ type: "exit", exitCode: 0 });
  });

  it("takes input and resize frames over the WebSocket", async () => {
    const terminal = await create({ command: "read line; echo got-$line; stty size", cols: 80, rows: 24 });
    const viewer = await view(terminal.id);
    viewer.socket.send(JSON.stringify({ type: "resize", cols: 90, rows: 30 }));
    await eventually(async () => (await call(t.url, "GET", `/api/terminals/${terminal.id}`)).body.terminal.cols === 90);
    viewer.socket.send(new TextEncoder().encode("hello\r"));
    await viewer.closed;
    expect(viewer.text()).toContain("got-hello");
    expect(viewer.text()).toContain("30 90");
  });

  it("killing kills the whole process group, and closing a viewer does not", async () => {
    const terminal = await create({ command: "sleep 300 & sleep 300 & echo started; wait", cols: 80, rows: 24 });
    expect(await waitForOutput(terminal.id, /started/)).toBe(true);
    const viewer = await view(terminal.id);
    viewer.socket.close();
    await viewer.closed;
    expect((await call(t.url, "GET", `/api/terminals/${terminal.id}`)).body.terminal.status).toBe("running");
    expect(groupMembers(terminal.pid).length).toBeGreaterThanOrEqual(3);
    await call(t.url, "POST", `/api/terminals/${terminal.id}/kill`);
    const done = await waitForExit(terminal.id);
    expect(done.status).toBe("exited");
    expect(await eventually(() => groupMembers(terminal.pid).length === 0)).toBe(true);
  });

  it("answers unknown terminals with TERMINAL_NOT_FOUND, on JSON routes and the WebSocket", async () => {
    const reply = await call(t.url, "GET", "/api/terminals/nope");
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe("TERMINAL_NOT_FOUND");
    await expect(view("nope")).rejects.toThrow();
    const bad = await call(t.url, "POST", "/api/terminals", { cols: 0, rows: 24 });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("INVALID_REQUEST");
  });
});

/** Whether a program is on this machine's PATH (the full-screen programs below are not part of the container image). */
const installed = (program: string) => spawnSync("sh", ["-c", `command -v ${program}`]).status === 0;
const ESC = "\x1b";

describe("full-screen programs", () => {
  const write = (id: string, data: string) => call(t.url, "POST", `/api/terminals/${id}/write`, { data });

  it.skipIf(!installed("vim"))("vim draws on the alternate screen, follows a resize, and quits on :q!", async () => {
    const terminal = await create({ command: "vim -u NONE -N -n", cols: 100, rows: 30 });
    // Drawn: the alternate screen, and the empty buffer's `~` lines.
    expect(await waitForOutput(terminal.id, new RegExp(`${ESC}\\[\\?1049h[\\s\\S]*~`))).toBe(true);
    await write(terminal.id, ":echo 'size' &lines &columns\r");
    expect(await waitForOutput(terminal.id, /size 30 100/)).toBe(true);
    await call(t.url, "POST", `/api/terminals/${terminal.id}/resize`, { cols: 120, rows: 40 });
    // vim takes in SIGWINCH when it next waits for input, which may be after keys already typed: ask until it has.
    const askedAfterResize = async () => {
      await write(terminal.id, ":echo 'size' &lines &columns\r");
      return /size 40 120/.test(await outputText(terminal.id));
    };
    expect(await eventually(askedAfterResize, 10_000, 200)).toBe(true);
    await write(terminal.id, "ityped-in-vim\x1b:q!\r");
    expect(await waitForExit(terminal.id)).toMatchObject({ status: "exited", exitCode: 0 });
    const text = await outputText(terminal.id);
    expect(text).toContain("typed-in-vim");
    // Back on the normal screen after the alternate one.
    expect(text.lastIndexOf(`${ESC}[?1049l`)).toBeGreaterThan(text.lastIndexOf(`${ESC}[?1049h`));
  });

  it.skipIf(!installed("top"))("top -b -n 1 prints one frame and exits", async () => {
    const terminal = await create({ command: "top -b -n 1", cols: 120, rows: 30 });
    expect(await waitForExit(terminal.id)).toMatchObject({ status: "exited", exitCode: 0 });
    const text = await outputText(terminal.id);
    expect(text).toMatch(/load average/);
    expect(text).toMatch(/PID\s+USER/);
  });

  it.skipIf(!installed("top"))("interactive top draws, redraws and quits on q", async () => {
    const terminal = await create({ command: "top -d 0.2", cols: 120, rows: 30 });
    // Two frames: the first, and one redrawn after the delay.
    expect(await waitForOutput(terminal.id, /PID\s+USER[\s\S]*load average[\s\S]*load average/)).toBe(true);
    await write(terminal.id, "q");
    expect(await waitForExit(terminal.id)).toMatchObject({ status: "exited", exitCode: 0 });
  });
});

/** Output up to and including entry `cursor`: the whole output minus what comes after the cursor. */
async function outputTextUpTo(id: string, cursor: number): Promise<string> {
  const whole = await outputText(id);
  const after = await outputText(id, cursor);
  return whole.slice(0, whole.length - after.length);
}

/** The foreground process group of the terminal `pid` is on (`tpgid` in /proc/<pid>/stat), or undefined once it is gone. */
function foregroundGroup(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, so it is skipped up to its closing parenthesis).
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[5]);
  } catch {
    return undefined;
  }
}

/** Children of `pid` (the shell's foreground job runs in a group of its own). */
/** The program a process runs now (its comm), if it exists. */
function commOf(pid: number | undefined): string | undefined {
  try {
    return pid === undefined ? undefined : readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

function childCount(pid: number): number {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).length;
  } catch {
    return 0;
  }
}

describe.skipIf(bwrapUnavailableReason() !== undefined)("terminals under bwrap", () => {
  let sandbox: SandboxServer;
  beforeAll(async () => {
    sandbox = await startSandbox({ isolation: "bwrap" });
  });
  afterAll(() => sandbox.close());

  it("runs the terminal's program through the isolation wrapper, at the asked size", async () => {
    const outside = mkdtempSync(join(tmpdir(), "terminal-outside-"));
    const created = await sandbox.post("/api/terminals", { command: `stty size; test -e ${outside} && echo visible || echo hidden; pwd`, cols: 77, rows: 22 });
    expect(created.status).toBe(200);
    const id = created.body.terminal.id as string;
    const done = await sandbox.get(`/api/terminals/${id}/wait`);
    expect(done.body.terminal).toMatchObject({ status: "exited", exitCode: 0 });
    const text = Buffer.from((await sandbox.get(`/api/terminals/${id}/output`)).body.data, "base64").toString("utf8");
    expect(text).toContain("22 77");
    expect(text).toContain("hidden");
    expect(text).toContain(sandbox.workspace);
    rmSync(outside, { recursive: true, force: true });
  });
});
