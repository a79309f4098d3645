/**
 * The container server refuses a body whose declared length is over its route's limit with 413
 * before any of it arrives (the requests here send headers only), and keeps serving.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { FILE_LIMITS, FILE_ROUTES } from "../../protocol/files.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Sends the headers only, declaring `length` bytes; the answer's status and code. */
function headersOnly(method: string, path: string, length: number): Promise<{ status: number; code: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: { "content-length": String(length), "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { code: string }).code });
      });
    });
    req.on("error", reject);
    req.setTimeout(5_000, () => reject(new Error(`${method} ${path}: no answer before the body`)));
    req.flushHeaders();
  });
}

describe("a declared length over the limit", () => {
  it.each([
    ["POST", "/api/execute", LIMITS.maxRequestBodyBytes + 1],
    ["POST", FILE_ROUTES.write, LIMITS.maxRequestBodyBytes + 1],
    ["PUT", `${FILE_ROUTES.stream}?path=x`, FILE_LIMITS.maxStreamedFileBytes + 1],
    ["PUT", ARCHIVE_ROUTES.extract, FILE_LIMITS.maxStreamedFileBytes + 1],
  ])("%s %s is 413 before the body", async (method, path, length) => {
    expect(await headersOnly(method, path, length)).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect((await call(server.url, "GET", "/api/ping")).status).toBe(200);
  });
});
