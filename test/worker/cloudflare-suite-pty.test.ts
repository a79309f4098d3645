/**
 * Cloudflare's PTY cases, ported to getSandbox: a terminal reached over WebSocket runs what is typed,
 * takes resize messages, replays its output to a reconnecting viewer, sends output to every viewer,
 * keeps its shell apart from other terminals, and answers a request without an upgrade with 426.
 * Theirs is `sandbox.terminal(request)` (one per session); ours is a terminal made with createTerminal
 * and reached with `terminal.connect(request)`.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Terminal } from "../../src/client/index.ts";
import { eventually } from "./helpers.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

interface Viewer {
  socket: WebSocket;
  text(): string;
  clear(): void;
  /** The control frames received (JSON text messages). */
  controls: Array<{ type?: string }>;
}

/** Connects to a terminal, collecting its output and control frames. */
async function view(terminal: Terminal): Promise<Viewer> {
  const response = await terminal.connect(new Request("http://sandbox.test/terminal", { headers: { upgrade: "websocket" } }));
  expect(response.status).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const decoder = new TextDecoder();
  const controls: Array<{ type?: string }> = [];
  let text = "";
  let pending = Promise.resolve();
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string") {
      controls.push(JSON.parse(event.data) as { type?: string });
      return;
    }
    const data = event.data as ArrayBuffer | Blob;
    pending = pending.then(async () => {
      text += decoder.decode(data instanceof Blob ? await data.arrayBuffer() : data, { stream: true });
    });
  });
  return { socket, text: () => text, clear: () => void (text = ""), controls };
}

const type = (viewer: Viewer, line: string) => viewer.socket.send(new TextEncoder().encode(`${line}\n`));
const shows = (viewer: Viewer, marker: string) => eventually(async () => viewer.text().includes(marker), 10_000, 50);

describe("PTY", () => {
  const sandbox = sandboxes.create("cf-pty");

  it("says ready once connected", async () => {
    const viewer = await view(await sandbox.createTerminal());
    expect(await eventually(async () => viewer.controls.some((frame) => frame.type === "ready"), 10_000, 50)).toBe(true);
    viewer.socket.close();
  });

  it("runs a command and shows its output", async () => {
    const viewer = await view(await sandbox.createTerminal());
    type(viewer, 'echo "pty-exec-marker"');
    expect(await shows(viewer, "pty-exec-marker")).toBe(true);
    viewer.socket.close();
  });

  it("takes resize control messages", async () => {
    const viewer = await view(await sandbox.createTerminal());
    viewer.socket.send(JSON.stringify({ type: "resize", cols: 120, rows: 40 }));
    viewer.clear();
    type(viewer, "stty size");
    expect(await shows(viewer, "40 120")).toBe(true);
    viewer.socket.close();
  });

  it("replays buffered output on reconnect", async () => {
    const terminal = await sandbox.createTerminal();
    const first = await view(terminal);
    type(first, 'echo "reconnect-marker"');
    expect(await shows(first, "reconnect-marker")).toBe(true);
    first.socket.close();
    const second = await view(terminal);
    expect(await shows(second, "reconnect-marker")).toBe(true);
    second.socket.close();
  });

  it("sends output to every viewer at once", async () => {
    const terminal = await sandbox.createTerminal();
    const one = await view(terminal);
    const two = await view(terminal);
    one.clear();
    two.clear();
    type(one, 'echo "multi-marker"');
    expect(await shows(one, "multi-marker")).toBe(true);
    expect(await shows(two, "multi-marker")).toBe(true);
    one.socket.close();
    two.socket.close();
  });

  it("keeps terminals' shells apart", async () => {
    const a = await view(await sandbox.createTerminal());
    type(a, 'export PTY_TEST_VAR="marker-a"');
    type(a, 'echo "set:$PTY_TEST_VAR"');
    expect(await shows(a, "set:marker-a")).toBe(true);
    const b = await view(await sandbox.createTerminal());
    type(b, 'echo "check:${PTY_TEST_VAR:-unset}"');
    expect(await shows(b, "check:unset")).toBe(true);
    expect(b.text()).not.toContain("check:marker-a");
    a.socket.close();
    b.socket.close();
  });

  it("answers a request without a WebSocket upgrade with 426", async () => {
    const terminal = await sandbox.createTerminal();
    expect((await terminal.connect(new Request("http://sandbox.test/terminal"))).status).toBe(426);
  });
});
