/**
 * The work a container reports in `GET /api/info` (`activity.work`, `activity.workIdleMs`), which the
 * Durable Object reads before it lets a sandbox sleep: processes that keep it awake (not those
 * started with `keepAlive: false`), live terminals, running code cells, open requests and an open
 * preview WebSocket; and how long none of it has run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ContainerWork } from "../../protocol/keep-alive.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { eventually } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

describe("the work a container reports", () => {
  let sandbox: SandboxServer;
  const report = async (): Promise<{ work: ContainerWork; workIdleMs: number }> => (await sandbox.get("/api/info")).body.activity;
  const idle = async () => {
    const { work } = await report();
    return work.processes + work.codeCells + work.terminals + work.requests === 0;
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox.close());

  it("counts a running process, and not one started with keepAlive: false; its own request is not work", async () => {
    expect(await report()).toMatchObject({ work: { processes: 0, codeCells: 0, terminals: 0, requests: 0 } });
    const quiet = await sandbox.post("/api/process/start", { command: "sleep 30", keepAlive: false });
    expect((await report()).work.processes).toBe(0);
    const busy = await sandbox.post("/api/process/start", { command: "sleep 30" });
    expect(await report()).toMatchObject({ work: { processes: 1 }, workIdleMs: 0 });
    await fetch(`${sandbox.url}/api/process/${busy.body.process.id}?signal=SIGKILL`, { method: "DELETE" });
    await fetch(`${sandbox.url}/api/process/${quiet.body.process.id}?signal=SIGKILL`, { method: "DELETE" });
    expect(await eventually(idle)).toBe(true);
  });

  it("counts a live terminal and a running code cell", async () => {
    const terminal = await sandbox.post("/api/terminals", { command: "sleep 30" });
    expect((await report()).work.terminals).toBe(1);
    await fetch(`${sandbox.url}/api/terminals/${terminal.body.terminal.id}?signal=SIGKILL`, { method: "DELETE" });
    expect(await eventually(async () => (await report()).work.terminals === 0)).toBe(true);

    const cell = sandbox.post("/api/code/run", { code: "await new Promise((resolve) => setTimeout(resolve, 1500)); 1", language: "javascript" });
    expect(await eventually(async () => (await report()).work.codeCells === 1)).toBe(true);
    await cell;
    expect((await report()).work.codeCells).toBe(0);
  });

  it("counts an open request and an open preview WebSocket", async () => {
    const exec = sandbox.exec({ command: "sleep 1" });
    expect(await eventually(async () => (await report()).work.requests >= 1)).toBe(true);
    await exec;

    writeFileSync(join(sandbox.workspace, "preview-server.cjs"), PREVIEW_SERVER_SOURCE);
    const server = await sandbox.post("/api/process/start", { command: "exec node preview-server.cjs 0 127.0.0.1", keepAlive: false });
    let port = 0;
    expect(
      await eventually(async () => {
        port = Number(/listening (\d+)/.exec((await sandbox.get(`/api/process/${server.body.process.id}/logs`)).body.stdout ?? "")?.[1] ?? 0);
        return port > 0;
      }, 10_000),
    ).toBe(true);
    const socket = new WebSocket(`${sandbox.url.replace("http:", "ws:")}/api/ports/${port}/proxy/socket`);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    expect((await report()).work.requests).toBe(1);
    socket.close();
    expect(await eventually(async () => (await report()).work.requests === 0)).toBe(true);
    await fetch(`${sandbox.url}/api/process/${server.body.process.id}?signal=SIGKILL`, { method: "DELETE" });
  });

  it("says for how long nothing has run", async () => {
    expect(await eventually(idle)).toBe(true);
    const before = (await report()).workIdleMs;
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect((await report()).workIdleMs).toBeGreaterThan(before);
  });
});
