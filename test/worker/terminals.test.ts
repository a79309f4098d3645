/** Terminals through the Durable Object (Workers RPC) and the Worker's /v1 API, WebSocket included. */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxRpc } from "../../src/rpc/sandbox-rpc.ts";
import { rpcTransport } from "../../src/rpc/stub-transport.ts";
import { apiCall, eventually, sandboxPool, uniqueId } from "./helpers.ts";

const made: SandboxRpc[] = [];
afterAll(async () => {
  await Promise.all(made.map((stub) => stub.destroy().catch(() => undefined)));
});

function stubFor(id: string): SandboxRpc {
  const stub = rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id)));
  made.push(stub);
  return stub;
}

interface Viewer {
  socket: WebSocket;
  text(): string;
  controls: Array<Record<string, any>>;
  closed: Promise<void>;
  /** Resolves once the binary messages received so far are read. */
  settled(): Promise<void>;
}

function accept(response: Response): Viewer {
  expect(response.status).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const chunks: Uint8Array[] = [];
  const controls: Array<Record<string, any>> = [];
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string") controls.push(JSON.parse(event.data));
    else if (event.data instanceof ArrayBuffer) chunks.push(new Uint8Array(event.data));
    // workerd hands binary messages over as Blobs here: read them in order.
    else {
      const blob = event.data as Blob;
      pending = pending.then(async () => void chunks.push(new Uint8Array(await blob.arrayBuffer())));
    }
  });
  let pending = Promise.resolve();
  const closed = new Promise<void>((resolve) => socket.addEventListener("close", () => resolve())).then(() => pending);
  const decoder = new TextDecoder();
  return { socket, text: () => chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join(""), controls, closed, settled: () => pending };
}

describe("terminals over Workers RPC", () => {
  it("creates a terminal of the asked size, takes input, resizes and reports the exit code", async () => {
    const sandbox = stubFor(uniqueId("term-rpc"));
    const terminal = await sandbox.createTerminal({ command: "stty size; read line; echo got-$line; stty size; exit 4", cols: 90, rows: 31 });
    expect(terminal).toMatchObject({ cols: 90, rows: 31, status: "running" });
    expect((await sandbox.listTerminals()).map((t) => t.id)).toContain(terminal.id);
    // The first `stty size` must have run before the resize.
    expect(await eventually(async () => atob((await sandbox.terminalOutput(terminal.id)).data).includes("31 90"), 10_000)).toBe(true);
    await sandbox.resizeTerminal(terminal.id, 120, 40);
    await sandbox.writeTerminal(terminal.id, "hello\r");
    const done = await sandbox.waitForTerminal(terminal.id);
    expect(done).toMatchObject({ status: "exited", exitCode: 4 });
    const output = await sandbox.terminalOutput(terminal.id);
    const text = atob(output.data);
    expect(text).toContain("got-hello");
    expect(text).toContain("40 120");
    const later = await sandbox.terminalOutput(terminal.id, { since: output.cursor });
    expect(later.data).toBe("");
  });

  it("answers an unknown terminal with TERMINAL_NOT_FOUND", async () => {
    const sandbox = stubFor(uniqueId("term-missing"));
    await expect(sandbox.getTerminal("nope")).rejects.toMatchObject({ code: "TERMINAL_NOT_FOUND" });
  });

  it("connectTerminal upgrades a request to a viewer of the terminal", async () => {
    const sandbox = stubFor(uniqueId("term-connect"));
    const terminal = await sandbox.createTerminal({ command: "read line; echo got-$line", cols: 80, rows: 24 });
    const viewer = accept(await sandbox.connectTerminal(terminal.id, new Request("http://sandbox.test/ws", { headers: { upgrade: "websocket" } })));
    viewer.socket.send(new TextEncoder().encode("over-rpc\r"));
    await viewer.closed;
    expect(viewer.text()).toContain("got-over-rpc");
    expect(viewer.controls.at(-1)).toMatchObject({ type: "exit", exitCode: 0 });
    // `ready` once, when the output asked for had been sent.
    expect(viewer.controls.filter((frame) => frame.type === "ready")).toEqual([{ type: "ready" }]);
  });
});

describe("the client's Terminal handle", () => {
  const pool = sandboxPool();
  afterAll(pool.destroyAll);

  it("writes, interrupts the foreground job, reads output from a cursor, connects a viewer and waits for the exit", async () => {
    const sandbox = pool.create("term-client");
    const terminal = await sandbox.createTerminal({ cols: 80, rows: 24 });
    expect(terminal).toMatchObject({ cols: 80, rows: 24 });
    expect((await sandbox.getTerminal(terminal.id)).pid).toBe(terminal.pid);
    const decoder = new TextDecoder();
    // The interrupt comes once the shell runs the line (it printed what the line computes, not just its echo).
    await terminal.write("echo sleeping-$((0+1)); sleep 30; echo after-$((1+1))\r");
    expect(await eventually(async () => decoder.decode((await terminal.output()).data).includes("sleeping-1"), 10_000)).toBe(true);
    await terminal.interrupt();
    // Typed only once the terminal has echoed the interrupt: the line discipline flushes its input
    // when it takes a Ctrl-C, and a line already on its way could be flushed with it.
    expect(await eventually(async () => decoder.decode((await terminal.output()).data).includes("^C"), 10_000)).toBe(true);
    await terminal.write("echo alive-$((2+3))\r");
    expect(await eventually(async () => decoder.decode((await terminal.output()).data).includes("alive-5"), 10_000)).toBe(true);
    const { cursor } = await terminal.output();
    const viewer = accept(await terminal.connect(new Request(`http://sandbox.test/ws?since=${cursor}`, { headers: { upgrade: "websocket" } })));
    viewer.socket.send(new TextEncoder().encode("echo viewer-$((3+4)); exit 2\r"));
    await viewer.closed;
    // The exit frame first: a viewer cut off before the end says so here, not as missing output.
    expect(viewer.controls.at(-1)).toMatchObject({ type: "exit", exitCode: 2 });
    expect(viewer.text()).toContain("viewer-7");
    expect(viewer.text()).not.toContain("alive-5");
    expect(await terminal.waitForExit()).toMatchObject({ status: "exited", exitCode: 2 });
    expect(decoder.decode((await terminal.output()).data)).not.toContain("after-2");
  });
});

describe("terminals over /v1", () => {
  it("creates a terminal and views it over the WebSocket, then resumes from a cursor with nothing lost", async () => {
    const id = uniqueId("term-v1");
    stubFor(id);
    const created = await apiCall(`/v1/sandboxes/${id}/terminals`, { method: "POST", json: { command: "read; for i in $(seq 1 50); do echo n-$i; done; read; echo bye", cols: 80, rows: 24 } });
    expect(created.status).toBe(201);
    const { terminal } = (await created.json()) as { terminal: { id: string } };
    const open = (since?: number) =>
      apiCall(`/v1/sandboxes/${id}/terminals/${terminal.id}/ws${since === undefined ? "" : `?since=${since}`}`, { headers: { upgrade: "websocket" } });
    const first = accept(await open());
    first.socket.send(JSON.stringify({ type: "resize", cols: 100, rows: 30 }));
    first.socket.send(new TextEncoder().encode("\r"));
    expect(await eventually(async () => (await first.settled(), first.text().includes("n-50")), 10_000)).toBe(true);
    const cursor = first.controls.filter((frame) => frame.type === "cursor").at(-1)!.cursor as number;
    const seen = first.text();
    first.socket.close();
    const info = await (await apiCall(`/v1/sandboxes/${id}/terminals/${terminal.id}`)).json() as { terminal: { status: string; cols: number } };
    expect(info.terminal).toMatchObject({ status: "running", cols: 100 });

    const resumed = accept(await open(cursor));
    const second = accept(await open(0));
    resumed.socket.send(new TextEncoder().encode("\r"));
    await Promise.all([resumed.closed, second.closed]);
    expect(seen + resumed.text()).toBe(second.text());
    expect(second.text()).toContain("bye");
    expect(resumed.controls.at(-1)).toMatchObject({ type: "exit", exitCode: 0 });
  });

  it("a resize frame on the WebSocket reaches the program as SIGWINCH, and stty size shows the new size", async () => {
    const id = uniqueId("term-v1-winch");
    stubFor(id);
    const created = await apiCall(`/v1/sandboxes/${id}/terminals`, {
      method: "POST",
      json: { command: "trap 'echo WINCH $(stty size)' WINCH; echo ready; while :; do sleep 0.05; done", cols: 80, rows: 24 },
    });
    const { terminal } = (await created.json()) as { terminal: { id: string } };
    const viewer = accept(await apiCall(`/v1/sandboxes/${id}/terminals/${terminal.id}/ws`, { headers: { upgrade: "websocket" } }));
    expect(await eventually(async () => (await viewer.settled(), viewer.text().includes("ready")), 10_000)).toBe(true);
    viewer.socket.send(JSON.stringify({ type: "resize", cols: 132, rows: 43 }));
    expect(await eventually(async () => (await viewer.settled(), viewer.text().includes("WINCH 43 132")), 10_000)).toBe(true);
    await apiCall(`/v1/sandboxes/${id}/terminals/${terminal.id}/kill?signal=SIGKILL`, { method: "POST" });
    await viewer.closed;
  });

  it("refuses a plain GET on the WebSocket route and an unknown terminal", async () => {
    const id = uniqueId("term-v1-bad");
    stubFor(id);
    const plain = await apiCall(`/v1/sandboxes/${id}/terminals/nope/ws`);
    expect(plain.status).toBe(426);
    expect(await plain.json()).toMatchObject({ code: "WEBSOCKET_UPGRADE_REQUIRED" });
    const missing = await apiCall(`/v1/sandboxes/${id}/terminals/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "TERMINAL_NOT_FOUND" });
    const missingSocket = await apiCall(`/v1/sandboxes/${id}/terminals/nope/ws`, { headers: { upgrade: "websocket" } });
    expect(missingSocket.status).toBe(404);
  });
});
