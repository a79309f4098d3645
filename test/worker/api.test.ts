/** The /v1 HTTP API of the Worker: auth, validation, every route, SSE with Last-Event-ID, OpenAPI. */
import { env, exports } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../protocol/limits.ts";
import { readSseStream } from "../../protocol/sse.ts";
import { createApp } from "../../src/api/app.ts";
import { uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const token = env.SANDBOX_API_TOKEN!;

function call(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  return worker.fetch(new Request(`http://sandbox.test${path}`, { ...init, headers, body: body ?? null }));
}

async function sse(response: Response): Promise<{ id?: string; event: string; data: Record<string, unknown> }[]> {
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const out = [];
  for await (const message of readSseStream(response.body!)) out.push({ id: message.id, event: message.event, data: JSON.parse(message.data) });
  return out;
}

describe("auth", () => {
  it("refuses requests without the right bearer token", async () => {
    const none = await call(`/v1/sandboxes/${uniqueId("auth")}/exec`, { method: "POST", headers: { authorization: "" }, json: { command: "true" } });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ success: false, code: "UNAUTHORIZED", httpStatus: 401 });
    const wrong = await call(`/v1/sandboxes/${uniqueId("auth")}/exec`, { method: "POST", headers: { authorization: "Bearer nope" }, json: { command: "true" } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("answers a malformed Authorization header with 401 and a body that says so", async () => {
    for (const authorization of ["Basic dXNlcjpwYXNz", "Bearer", "Bearer two words", `Bearer ${token}\ttrailing`, token]) {
      const response = await call(`/v1/sandboxes/${uniqueId("auth")}/exec`, { method: "POST", headers: { authorization }, json: { command: "true" } });
      expect(response.status, authorization).toBe(401);
      expect(await response.json()).toMatchObject({ success: false, code: "UNAUTHORIZED", httpStatus: 401, message: expect.stringContaining("Bearer") });
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("refuses everything when no token is configured", async () => {
    const app = createApp();
    const request = new Request("http://sandbox.test/v1/sandboxes/abc/exec", {
      method: "POST",
      headers: { authorization: "Bearer anything", "content-type": "application/json" },
      body: JSON.stringify({ command: "true" }),
    });
    const response = await app.fetch(request, { ...env, SANDBOX_API_TOKEN: undefined }, createExecutionContext());
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "AUTH_NOT_CONFIGURED" });
  });

  it("serves the OpenAPI document without a token", async () => {
    const response = await call("/v1/openapi.json", { headers: { authorization: "" } });
    expect(response.status).toBe(200);
    const doc = (await response.json()) as { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: object } }> } }>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v1/sandboxes/{id}/exec",
        "/v1/sandboxes/{id}/exec/stream",
        "/v1/sandboxes/{id}/processes",
        "/v1/sandboxes/{id}/processes/{pid}",
        "/v1/sandboxes/{id}/processes/{pid}/logs",
        "/v1/sandboxes/{id}/processes/{pid}/logs/stream",
        "/v1/sandboxes/{id}/processes/{pid}/stdin",
        "/v1/sandboxes/{id}/processes/cleanup",
      ]),
    );
    // Every route the app serves under /v1/sandboxes is documented, with its method.
    const served = createApp()
      .routes.filter((route) => route.path.startsWith("/v1/sandboxes/:id") && route.method !== "ALL")
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`);
    // The preview-port proxy answers any method ahead of the routes (it is middleware): documented once, as GET.
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path !== "/v1/sandboxes/{id}/ports/{port}/{path}")
      .flatMap(([path, item]) => Object.keys(item).filter((key) => key !== "parameters").map((method) => `${method} ${path}`));
    expect(doc.paths["/v1/sandboxes/{id}/ports/{port}/{path}"]).toHaveProperty("get");
    expect(new Set(served)).toEqual(new Set(documented));
    const execBody = doc.paths["/v1/sandboxes/{id}/exec"]!.post!.requestBody!.content["application/json"]!.schema;
    expect(execBody.properties).toHaveProperty("command");
    expect(execBody.properties).toHaveProperty("timeout");
    // A command past its timeout: the status its code maps to, with the result so far in `context`.
    const timedOut = (doc.paths["/v1/sandboxes/{id}/exec"]!.post as { responses: Record<string, any> }).responses["422"];
    const timeoutBody = timedOut.content["application/json"].schema;
    expect(timeoutBody.properties.code).toMatchObject({ const: "EXECUTION_TIMEOUT" });
    expect(timeoutBody.properties.context.properties).toHaveProperty("timedOut");
  });
});

describe("validation", () => {
  it("rejects bad sandbox ids", async () => {
    for (const id of ["bad%20id", "-leading", "a..b", "x".repeat(65), "%F0%9F%98%80"]) {
      const response = await call(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: "true" } });
      expect(response.status, id).toBe(400);
      expect(await response.json()).toMatchObject({ code: "INVALID_SANDBOX_ID" });
    }
  });

  it("rejects bad bodies with codes", async () => {
    const base = `/v1/sandboxes/${uniqueId("bodies")}`;
    const malformed = await call(`${base}/exec`, { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: "INVALID_JSON" });
    const missing = await call(`${base}/exec`, { method: "POST", json: { cmd: "ls" } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({
      code: "INVALID_REQUEST",
      context: { issues: [expect.objectContaining({ path: "command" }), expect.objectContaining({ message: 'Unrecognized key: "cmd"' })] },
    });
    const badTimeout = await call(`${base}/processes`, { method: "POST", json: { command: "ls", timeout: -1 } });
    expect(await badTimeout.json()).toMatchObject({ code: "INVALID_REQUEST" });
    const badStdin = await call(`${base}/processes/x/stdin`, { method: "POST", json: { nonsense: true } });
    expect(await badStdin.json()).toMatchObject({ code: "INVALID_REQUEST" });
    const badSince = await call(`${base}/processes/x/logs/stream`, { headers: { "last-event-id": "abc" } });
    expect(await badSince.json()).toMatchObject({ code: "INVALID_REQUEST" });
    const tooLarge = await call(`${base}/exec`, { method: "POST", json: { command: "true", stdin: "x".repeat(17 * 1024 * 1024) } });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    for (const json of [{ command: "echo a\u0000b" }, { command: "echo", args: ["a\u0000b"] }, { command: "env", env: { A: "x\u0000y" } }]) {
      const withNul = await call(`${base}/exec`, { method: "POST", json });
      expect(withNul.status).toBe(400);
      expect(await withNul.json()).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("NUL") });
    }
    const depth = 100_000;
    for (const headers of [{ "content-type": "application/json" }, { "content-type": "application/x-www-form-urlencoded" }]) {
      const deep = await call(`${base}/exec`, { method: "POST", headers, body: `{"command":"true","env":${"[".repeat(depth)}${"]".repeat(depth)}}` });
      expect(deep.status).toBe(400);
      expect(await deep.json()).toMatchObject({ code: "INVALID_JSON", message: expect.stringContaining(`${LIMITS.maxJsonDepth} levels`) });
    }
    const nowhere = await call(`${base}/nowhere`);
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("routes", () => {
  const base = `/v1/sandboxes/${uniqueId("routes")}`;

  it("execs, buffered and streamed (JSON even when curl sends form encoding)", async () => {
    const buffered = await call(`${base}/exec`, {
      method: "POST",
      body: JSON.stringify({ command: "echo $X; echo e >&2", env: { X: "42" } }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(buffered.status).toBe(200);
    expect(await buffered.json()).toMatchObject({ success: true, exitCode: 0, stdout: "42\n", stderr: "e\n" });

    const events = await sse(await call(`${base}/exec/stream`, { method: "POST", json: { command: "echo a; echo b; exit 2" } }));
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("start");
    expect(new Set(types.slice(1, -1))).toEqual(new Set(["stdout"]));
    expect(events.at(-1)).toMatchObject({ event: "complete", data: { exitCode: 2 } });
    expect(events.filter((e) => e.event === "stdout").map((e) => e.data.data).join("")).toBe("a\nb\n");
    for (const event of events) if (event.id !== undefined) expect(Number(event.id)).toBe(event.data.seq);
  });

  it("manages processes: start, list, get, logs, stream with Last-Event-ID, stdin, kill, kill-all, cleanup", async () => {
    const started = await call(`${base}/processes`, { method: "POST", json: { command: "echo hi; cat", options: { processId: "cat" } } });
    expect(started.status).toBe(201);
    const { process } = (await started.json()) as { process: { id: string; generation: string; status: string } };
    expect(process).toMatchObject({ id: "cat", generation: expect.any(String) });

    const list = (await (await call(`${base}/processes`)).json()) as { processes: { id: string }[] };
    expect(list.processes.map((p) => p.id)).toContain("cat");
    expect(await (await call(`${base}/processes/cat`)).json()).toMatchObject({ process: { id: "cat", status: "running" } });

    const written = await call(`${base}/processes/cat/stdin?generation=${process.generation}`, { method: "POST", json: { data: "echoed\n" } });
    expect(await written.json()).toMatchObject({ processId: "cat", bytesWritten: 7, closed: false });
    await call(`${base}/processes/cat/stdin`, { method: "POST", json: { close: true } });

    const all = await sse(await call(`${base}/processes/cat/logs/stream`));
    expect(all.filter((e) => e.event === "stdout").map((e) => e.data.data).join("")).toBe("hi\nechoed\n");
    expect(all.at(-2)).toMatchObject({ event: "status", data: { status: "completed" } });
    // Then `exit`, outside the log (no id).
    expect(all.at(-1)).toMatchObject({ event: "exit", data: { status: "completed", exitCode: 0 } });
    expect(all.at(-1)!.id).toBeUndefined();
    const firstId = all.find((e) => e.event === "stdout")!.id!;
    const resumed = await sse(await call(`${base}/processes/cat/logs/stream`, { headers: { "last-event-id": firstId } }));
    expect(resumed.map((e) => e.id)).toEqual(all.slice(all.findIndex((e) => e.id === firstId) + 1).map((e) => e.id));
    const viaQuery = await sse(await call(`${base}/processes/cat/logs/stream?since=${firstId}`));
    expect(viaQuery.map((e) => e.id)).toEqual(resumed.map((e) => e.id));

    expect(await (await call(`${base}/processes/cat/logs`)).json()).toMatchObject({ processId: "cat", stdout: "hi\nechoed\n", stderr: "" });

    await call(`${base}/processes`, { method: "POST", json: { command: "sleep 30", processId: "s1" } });
    await call(`${base}/processes`, { method: "POST", json: { command: "sleep 30", processId: "s2" } });
    const killed = await call(`${base}/processes/s1?signal=KILL`, { method: "DELETE" });
    expect(await killed.json()).toMatchObject({ processId: "s1", signal: "SIGKILL" });
    expect(await (await call(`${base}/processes?signal=SIGTERM`, { method: "DELETE" })).json()).toEqual({ killed: 1 });
    const cleaned = (await (await call(`${base}/processes/cleanup`, { method: "POST" })).json()) as { cleaned: number };
    expect(cleaned.cleaned).toBeGreaterThanOrEqual(3);
    expect(await (await call(`${base}/processes`)).json()).toEqual({ processes: [] });
  });

  it("answers errors with wire codes: unknown process, bad signal, stale generation", async () => {
    const missing = await call(`${base}/processes/ghost`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "PROCESS_NOT_FOUND" });
    await call(`${base}/processes`, { method: "POST", json: { command: "sleep 30", processId: "live" } });
    const badSignal = await call(`${base}/processes/live?signal=SIGBOGUS`, { method: "DELETE" });
    expect(badSignal.status).toBe(400);
    const stale = await call(`${base}/processes/live?generation=not-this-one`);
    expect(stale.status).toBe(410);
    expect(await stale.json()).toMatchObject({ code: "STALE_PROCESS_HANDLE", context: { processId: "live" } });
    await call(`${base}/processes/live?signal=KILL`, { method: "DELETE" });
  });

  it("reports and destroys the sandbox", async () => {
    const info = (await (await call(base)).json()) as { id: string; generationNumber: number };
    expect(info).toMatchObject({ id: base.split("/").at(-1), generationNumber: expect.any(Number) });
    expect((await call(`${base}/config`, { method: "PATCH", json: { sleepAfter: "5m" } })).status).toBe(204);
    expect((await call(base, { method: "DELETE" })).status).toBe(204);
    const after = (await (await call(base)).json()) as { generationNumber: number };
    expect(after.generationNumber).toBe(info.generationNumber + 1);
  });
});
