/**
 * The container server refuses unknown fields on every route that takes a JSON body: the walk goes
 * over the server's own route table (every POST, PUT and PATCH), sending a misspelled field, and
 * expects 400. Raw-body routes (uploads, archives) take bytes, not fields, and are left out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_GROUPS } from "../../container/http/routes/index.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Routes whose body is raw bytes, or that take no body at all. */
const NOT_JSON = new Set([
  "PUT /api/files/stream",
  "PUT /api/archive/extract",
  "POST /api/process/cleanup",
  "POST /api/code/contexts/:id/restart",
  "POST /api/code/executions/:id/interrupt",
  "POST /api/terminals/:id/interrupt",
  "POST /api/terminals/:id/kill",
]);

describe("unknown fields on the container server", () => {
  it("every JSON route refuses a misspelled field with 400", async () => {
    const routes = ROUTE_GROUPS.flatMap((group) => group.routes).filter((route) => route.method !== "GET" && route.method !== "DELETE");
    const refused: string[] = [];
    const accepted: string[] = [];
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      if (NOT_JSON.has(name)) continue;
      const path = route.path.replace(/:[a-zA-Z]+/g, "p1");
      const { status, body } = await call(server.url, route.method, path, { contxt: "misspelled" });
      (status === 400 ? refused : accepted).push(`${name} → ${status} ${body?.code ?? ""}`);
    }
    expect(accepted).toEqual([]);
    expect(refused.length).toBeGreaterThan(30);
  });
});
