/**
 * A terminal's last output always arrives: what a program writes just before it exits reaches the
 * log and every viewer before the exit is reported, also while the machine is busy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { burnCpu, type CpuBurner } from "../cpu-burner.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

const PROGRAMS = 200;
/** How many terminals run at once. */
const PARALLEL = 4;

let t: TestServer;
let burner: CpuBurner;
beforeAll(async () => {
  t = await startTestServer();
  burner = burnCpu({ maxMs: 120_000 });
});
afterAll(async () => {
  await burner?.stop();
  await t?.close();
});

/** The whole output a viewer got from the start, once the socket closed after the exit frame. */
async function viewToEnd(id: string): Promise<{ text: string; exit: Record<string, unknown> | undefined }> {
  const socket = new WebSocket(`${t.url.replace("http", "ws")}/api/terminals/${id}/ws?since=0`);
  socket.binaryType = "arraybuffer";
  const chunks: Buffer[] = [];
  let exit: Record<string, unknown> | undefined;
  socket.addEventListener("message", (event) => {
    if (typeof event.data !== "string") chunks.push(Buffer.from(event.data as ArrayBuffer));
    else if (JSON.parse(event.data).type === "exit") exit = JSON.parse(event.data);
  });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("close", () => resolve());
    socket.addEventListener("error", () => reject(new Error(`viewer of ${id} failed`)));
  });
  return { text: Buffer.concat(chunks).toString("utf8"), exit };
}

/** Bytes of `expected` missing from `got` (a terminal turns "\n" into "\r\n"). */
function lostBytes(expected: string, got: string): number {
  const want = expected.replaceAll("\n", "\r\n");
  let same = 0;
  while (same < want.length && want[same] === got[same]) same++;
  return want.length - same;
}

describe("a terminal's last output", () => {
  it(`reaches the log and a viewer before the exit, for ${PROGRAMS} short programs on a busy machine`, { timeout: 180_000 }, async () => {
    let lostInLog = 0;
    let lostInViewers = 0;
    const failures: string[] = [];
    const runOne = async (i: number) => {
      // Half end in a newline, half do not (a prompt or a progress bar has none); half leave a
      // background job holding the PTY open past their exit, so the PTY does not end with them.
      const expected = `last-${i}-${"x".repeat((i * 37) % 900)}${i % 2 === 0 ? "\n" : ""}`;
      const holder = i % 4 >= 2 ? "sleep 0.4 & " : "";
      const command = `${holder}printf '%s' '${expected}'; exit ${i % 3}`;
      const created = await call(t.url, "POST", "/api/terminals", { command, cols: 80, rows: 24 });
      expect(created.status).toBe(200);
      const id = created.body.terminal.id as string;
      const viewer = await viewToEnd(id);
      const { body } = await call(t.url, "GET", `/api/terminals/${id}/output?since=0`);
      const fromLog = lostBytes(expected, Buffer.from(body.data, "base64").toString("utf8"));
      const fromViewer = lostBytes(expected, viewer.text);
      lostInLog += fromLog;
      lostInViewers += fromViewer;
      if (fromLog + fromViewer > 0) failures.push(`#${i}: ${fromLog} bytes missing from the log, ${fromViewer} from the viewer`);
      expect(viewer.exit).toMatchObject({ type: "exit", exitCode: i % 3 });
      await call(t.url, "DELETE", `/api/terminals/${id}`);
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < PROGRAMS) await runOne(next++);
      }),
    );
    expect(failures).toEqual([]);
    expect({ lostInLog, lostInViewers }).toEqual({ lostInLog: 0, lostInViewers: 0 });
  });
});
