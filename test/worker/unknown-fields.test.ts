/**
 * Unknown fields are refused with 400 on every route: a misspelled field never runs a request as if
 * it were absent (`context` for `contextId` once ran code in the default context). The walk takes
 * every operation with a JSON body from the OpenAPI document, so a new route is walked as well.
 */
import { describe, expect, it } from "vitest";
import { apiCall, freshSandbox } from "./helpers.ts";

interface Operation {
  requestBody?: { content?: Record<string, { schema?: { additionalProperties?: unknown; anyOf?: unknown[] } }> };
}

const document = async () => (await (await apiCall("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, Operation>> };

/** Path parameters filled with names that exist nowhere (the body is checked before anything is looked up). */
const concrete = (path: string, sandboxId: string) => path.replace("{id}", sandboxId).replace(/\{[^}]+\}/g, "p1");

describe("unknown fields", () => {
  it("every JSON body of /v1 refuses a misspelled field with 400 INVALID_REQUEST naming it", async () => {
    const { paths } = await document();
    const sandboxId = freshSandbox("unknown-fields").id;
    const walked: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation.requestBody?.content?.["application/json"]) continue;
        const response = await apiCall(concrete(path, sandboxId), { method: method.toUpperCase(), json: { contxt: "misspelled" } });
        const body = (await response.json()) as { code?: string };
        walked.push(`${method.toUpperCase()} ${path} → ${response.status} ${body.code}`);
        expect.soft(response.status, `${method} ${path}`).toBe(400);
        expect.soft(body.code, `${method} ${path}`).toBe("INVALID_REQUEST");
        // Among the issues (a required field may be missing too): the unknown one, by name; a body of
        // several shapes (stdin: data, or close) says only that none fits.
        const union = Boolean(operation.requestBody.content["application/json"].schema?.anyOf);
        if (!union) expect.soft(JSON.stringify(body), `${method} ${path}`).toContain('Unrecognized key: \\"contxt\\"');
      }
    }
    expect(walked.length).toBeGreaterThan(25);
  });

  it("code/run with `context` (for contextId) is refused, not run in the default context", async () => {
    const sandbox = freshSandbox("unknown-context");
    const response = await apiCall(`/v1/sandboxes/${sandbox.id}/code/run`, { method: "POST", json: { code: "1 + 1", context: "mine" } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("the documented aliases stay accepted: timeout or timeoutMs, flat or nested start options", async () => {
    const sandbox = freshSandbox("aliases");
    try {
      for (const json of [
        { command: "echo a", timeout: 5_000 },
        { command: "echo a", timeoutMs: 5_000 },
      ]) {
        const response = await apiCall(`/v1/sandboxes/${sandbox.id}/exec`, { method: "POST", json });
        expect(response.status).toBe(200);
      }
      for (const json of [
        { command: "true", processId: "flat", timeoutMs: 5_000 },
        { command: "true", options: { processId: "nested", timeout: 5_000 } },
      ]) {
        const response = await apiCall(`/v1/sandboxes/${sandbox.id}/processes`, { method: "POST", json });
        expect(response.status).toBe(201);
      }
    } finally {
      await sandbox.destroy();
    }
  });
});
