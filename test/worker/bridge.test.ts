/**
 * The Bridge API's exec stream in the Worker, against a real sandbox: keepalive comments on a quiet
 * command, and the whole output, tail included, when the stream from the Durable Object breaks
 * midway (the only fault is a stream we cut). The routes end to end are tested with a real Bridge
 * client in test/stack/cloudflare-bridge.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bridgeExecResponse } from "../../src/api/bridge/exec.ts";
import type { SandboxRpc } from "../../src/rpc/sandbox-rpc.ts";
import { rpcTransport } from "../../src/rpc/stub-transport.ts";
import { countedLines, countingCommand, cutAfter, uniqueId } from "./helpers.ts";

function sandboxRpc(label: string): SandboxRpc {
  return rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(uniqueId(label))));
}

/** The frames of a Bridge event stream: named events, and comments as `:`. */
async function frames(response: Response): Promise<{ event: string; data: string }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      if (frame.startsWith(":")) return { event: ":", data: frame.slice(1).trim() };
      const [eventLine, dataLine] = frame.split("\n");
      return { event: eventLine!.slice("event: ".length), data: dataLine!.slice("data: ".length) };
    });
}

const decoded = (events: { event: string; data: string }[], stream: string) =>
  events
    .filter((e) => e.event === stream)
    .map((e) => new TextDecoder().decode(Uint8Array.from(atob(e.data), (c) => c.charCodeAt(0))))
    .join("");

describe("Bridge exec stream", () => {
  it("sends keepalive comments while a command is quiet, then its output and exit", async () => {
    const events = await frames(bridgeExecResponse(sandboxRpc("bridge-quiet"), "sh", { args: ["-c", "sleep 0.5; echo late"], encoding: "base64" }, 50));
    const firstOutput = events.findIndex((e) => e.event === "stdout");
    expect(events.slice(0, firstOutput).some((e) => e.event === ":" && e.data === "keepalive")).toBe(true);
    expect(decoded(events, "stdout")).toBe("late\n");
    expect(events.at(-1)).toEqual({ event: "exit", data: '{"exit_code":0}' });
  });

  it("keeps every byte, the tail included, when the stream from the Durable Object breaks midway", async () => {
    const rpc = sandboxRpc("bridge-cut");
    const resumes: (number | undefined)[] = [];
    let cut = false;
    const broken: SandboxRpc = {
      ...rpc,
      execStream: async (command, options) => {
        const stream = await rpc.execStream(command, options);
        if (cut) return stream;
        cut = true;
        return cutAfter(stream, 2_000);
      },
      resumeExecStream: (processId, options) => {
        resumes.push(options?.since);
        return rpc.resumeExecStream(processId, options);
      },
    };
    const events = await frames(bridgeExecResponse(broken, countingCommand(300), { encoding: "base64" }));
    expect(resumes.length).toBeGreaterThanOrEqual(1);
    expect(decoded(events, "stdout")).toBe(countedLines(300));
    expect(events.at(-1)).toEqual({ event: "exit", data: '{"exit_code":0}' });
  });
});
