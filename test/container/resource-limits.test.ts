/**
 * Bounded resources inside one container server: processes, terminals, code contexts and watches
 * each have a limit (protocol/limits.ts, tightened here) with a code of its own; hitting one refuses
 * only that request, the server keeps answering, and a freed slot is usable again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODE_ROUTES } from "../../protocol/code.ts";
import { TERMINAL_ROUTES } from "../../protocol/terminals.ts";
import { WATCH_ROUTES } from "../../protocol/watch.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ maxLiveProcesses: 3, maxTerminals: 2, maxCodeContexts: 2, maxWatches: 2 });
});
afterAll(() => server.close());

async function stillAnswers(): Promise<void> {
  expect((await call(server.url, "GET", "/api/ping")).status).toBe(200);
}

describe("limits of one server", () => {
  it("processes: TOO_MANY_PROCESSES past the limit, a slot freed is taken again", async () => {
    for (const id of ["p1", "p2", "p3"]) expect((await call(server.url, "POST", "/api/process/start", { command: "sleep 30", processId: id })).status).toBe(200);
    const refused = await call(server.url, "POST", "/api/process/start", { command: "sleep 30", processId: "p4" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "TOO_MANY_PROCESSES", context: { limit: 3 } });
    await stillAnswers();
    await call(server.url, "DELETE", "/api/process/kill-all?signal=SIGKILL");
    expect((await call(server.url, "POST", "/api/execute", { command: "echo free" })).body.stdout).toBe("free\n");
  });

  it("terminals: TOO_MANY_TERMINALS past the limit", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call(server.url, "POST", TERMINAL_ROUTES.list, { command: "sleep 30" });
      expect(created.status).toBe(200);
      ids.push(created.body.terminal.id);
    }
    const refused = await call(server.url, "POST", TERMINAL_ROUTES.list, { command: "sleep 30" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "TOO_MANY_TERMINALS", context: { limit: 2 } });
    await stillAnswers();
    expect((await call(server.url, "DELETE", TERMINAL_ROUTES.one(ids[0]!))).status).toBe(200);
    expect((await call(server.url, "POST", TERMINAL_ROUTES.list, { command: "sleep 30" })).status).toBe(200);
  });

  it("code contexts: TOO_MANY_CODE_CONTEXTS past the limit", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call(server.url, "POST", CODE_ROUTES.contexts, { language: "javascript" });
      expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
      ids.push(created.body.context?.id ?? created.body.id);
    }
    const refused = await call(server.url, "POST", CODE_ROUTES.contexts, { language: "javascript" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "TOO_MANY_CODE_CONTEXTS", context: { limit: 2 } });
    await stillAnswers();
    expect((await call(server.url, "DELETE", CODE_ROUTES.context(ids[0]!))).status).toBe(200);
    expect((await call(server.url, "POST", CODE_ROUTES.contexts, { language: "javascript" })).status).toBeLessThan(300);
  });

  it("watches: TOO_MANY_WATCHES past the limit; a watch closed gives its slot back", async () => {
    const open = async () => {
      const stop = new AbortController();
      const response = await fetch(server.url + WATCH_ROUTES.watch, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "." }),
        signal: stop.signal,
      });
      return { response, stop };
    };
    const first = await open();
    const second = await open();
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    const third = await open();
    expect(third.response.status).toBe(429);
    expect(await third.response.json()).toMatchObject({ code: "TOO_MANY_WATCHES", context: { limit: 2 } });
    await stillAnswers();
    first.stop.abort();
    let again: Awaited<ReturnType<typeof open>> | undefined;
    for (let i = 0; i < 50 && again?.response.status !== 200; i++) {
      await again?.response.body?.cancel().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await open();
    }
    expect(again?.response.status).toBe(200);
    second.stop.abort();
    again?.stop.abort();
  });
});
