/**
 * Streams whose container goes away under them (destroyed, or crashed at the runtime): they end with
 * a coded `error` event, which the client raises as a SandboxError with that code — not a body that
 * just stops, and not a resume that lands on a new container where the process never existed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readSseStream } from "../../protocol/sse.ts";
import { ContainerUnavailableError } from "../../src/client/index.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { apiCall, runtimeFetch, uniqueId } from "./helpers.ts";

/** Kills the sandbox's container server at the runtime, as a crash would. */
async function crash(id: string): Promise<void> {
  const response = await runtimeFetch(`/containers/${id}`, { method: "DELETE" });
  if (!response.ok) throw new Error(`the runtime refused to stop ${id}: ${response.status} ${await response.text()}`);
}

describe("a stream whose container goes away", () => {
  it("ends an exec stream destroyed midway with CONTAINER_UNAVAILABLE", async () => {
    const sandbox = getSandbox(env.Sandbox, uniqueId("loss-exec"));
    const seen: string[] = [];
    const outcome = await (async () => {
      for await (const event of sandbox.execStream("echo started; sleep 30")) {
        seen.push(event.type);
        if (event.type === "stdout") await sandbox.destroy();
      }
    })().catch((error: unknown) => error);
    expect(seen).toEqual(["start", "stdout"]);
    expect(outcome).toBeInstanceOf(ContainerUnavailableError);
    expect(outcome).toMatchObject({ code: "CONTAINER_UNAVAILABLE", message: expect.stringContaining("stopped") });
  });

  it("ends a process log stream whose container crashed with CONTAINER_UNAVAILABLE", async () => {
    const id = uniqueId("loss-logs");
    const sandbox = getSandbox(env.Sandbox, id);
    const process = await sandbox.startProcess("echo started; sleep 30");
    const seen: string[] = [];
    const outcome = await (async () => {
      for await (const event of process.streamLogs()) {
        seen.push(event.type);
        if (event.type === "stdout") await crash(id);
      }
    })().catch((error: unknown) => error);
    expect(seen).toContain("stdout");
    expect(outcome).toBeInstanceOf(ContainerUnavailableError);
    await sandbox.destroy();
  });

  it("ends the HTTP body with an error event carrying the code", async () => {
    const id = uniqueId("loss-http");
    const response = await apiCall(`/v1/sandboxes/${id}/exec/stream`, { method: "POST", json: { command: "echo started; sleep 30" } });
    expect(response.status).toBe(200);
    const messages: { event: string | undefined; data: string }[] = [];
    for await (const message of readSseStream(response.body!)) {
      messages.push({ event: message.event, data: message.data });
      if (message.event === "stdout") await crash(id);
    }
    const last = messages.at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toMatchObject({ type: "error", code: "CONTAINER_UNAVAILABLE" });
    await getSandbox(env.Sandbox, id).destroy();
  });
});
