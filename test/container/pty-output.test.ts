/**
 * A PTY program's last output is read before its exit is reported, even when nothing read the PTY
 * in time (a busy server): the PTY library gives up on an unread PTY 200 ms after the exit.
 */
import { spawn } from "@lydell/node-pty";
import { describe, expect, it } from "vitest";
import { readPtyOutput } from "../../container/terminals/pty-output.ts";

/** Runs `script` on a PTY; what arrived by the exit. `unread`: nothing is taken until the program has exited. */
function runOnPty(script: string, { unread }: { unread: boolean }): Promise<{ output: string; exitCode: number }> {
  const pty = spawn("/bin/sh", ["-c", script], { encoding: null, cols: 80, rows: 24 });
  const chunks: Buffer[] = [];
  readPtyOutput(pty, (data) => chunks.push(data));
  // A reader too busy to take its output: nothing is handed on until the library gives up on the PTY.
  if (unread) pty.pause();
  return new Promise((resolve) => pty.onExit(({ exitCode }) => resolve({ output: Buffer.concat(chunks).toString("utf8"), exitCode })));
}

describe("a PTY's output", () => {
  it("keeps what a program wrote last when nothing read it before the exit", async () => {
    expect(await runOnPty("printf 'last words'; exit 3", { unread: true })).toEqual({ output: "last words", exitCode: 3 });
  });

  it("does not read forever from a background job that goes on writing to the PTY", async () => {
    // Read all along (an unread PTY would hold the writers), so the spam runs as fast as it can. It
    // ignores the hangup and writes until a write fails: a reader that waited for its end never returns.
    const { output, exitCode } = await runOnPty("(trap '' HUP; while echo spam; do :; done) & printf 'last words'; exit 4", { unread: false });
    expect(exitCode).toBe(4);
    expect(output).toContain("last words");
  });

  it("keeps it also while a background job holds the PTY open past the exit", async () => {
    const line = "y".repeat(3000);
    expect(await runOnPty(`sleep 1 & printf '%s\\n' '${line}'`, { unread: true })).toEqual({ output: `${line}\r\n`, exitCode: 0 });
  });
});
