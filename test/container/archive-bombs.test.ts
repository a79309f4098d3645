/**
 * Archives built to wedge the extraction, sent to the container server as an attacker would: 2 GiB
 * of zeros gzip'd (2 MB on the wire: an empty archive followed by nothing), the same gzip'd twice
 * (node-tar would unfold the inner one itself), and a body dripped in and never finished. Each is
 * refused with its code, the workspace is left as it was, and the server answers other calls
 * meanwhile and after.
 */
import { request } from "node:http";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARCHIVE_LIMITS, ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { gzippedZeros, rawArchive } from "./archive-helpers.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let server: TestServer;
let slow: TestServer;
const DRIP_DEADLINE_MS = 1_500;

beforeAll(async () => {
  [server, slow] = await Promise.all([startTestServer(), startTestServer({ extractDeadlineMs: DRIP_DEADLINE_MS })]);
});
afterAll(() => Promise.all([server.close(), slow.close()]));

async function extract(target: TestServer, body: Buffer): Promise<{ status: number; body: { code?: string; context?: Record<string, unknown> } }> {
  const response = await fetch(`${target.url}${ARCHIVE_ROUTES.extract}?clear=true`, { method: "PUT", body: new Uint8Array(body) });
  return { status: response.status, body: await response.json() };
}

describe("a gzip bomb", () => {
  it("2 GiB of zeros gzip'd is refused, INVALID_ARCHIVE, and the workspace is as it was", async () => {
    writeFileSync(join(server.workspace, "kept.txt"), "kept\n");
    const bomb = gzippedZeros(2 * 1024 ** 3);
    expect(bomb.length).toBeLessThan(3 * 1024 * 1024);
    const answer = await extract(server, bomb);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "INVALID_ARCHIVE", context: { maxTrailingBytes: ARCHIVE_LIMITS.maxTrailingBytes } });
    expect(readdirSync(server.workspace)).toEqual(["kept.txt"]);
    expect((await call(server.url, "POST", "/api/execute", { command: "echo still here" })).body).toMatchObject({ stdout: "still here\n" });
  });

  it("while one is refused, the server answers another call", async () => {
    const bomb = gzippedZeros(1024 ** 3);
    const refused = extract(server, bomb);
    const other = call(server.url, "POST", "/api/execute", { command: "echo meanwhile" });
    expect((await other).body).toMatchObject({ stdout: "meanwhile\n" });
    expect((await refused).body).toMatchObject({ code: "INVALID_ARCHIVE" });
  });

  it("a bomb gzip'd twice is refused before anything unfolds the inner one", async () => {
    const twice = gzipSync(gzippedZeros(1024 ** 3));
    const answer = await extract(server, twice);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("INVALID_ARCHIVE");
  });

  it("an archive with a few KiB of padding after its end (a tar record) is taken", async () => {
    const tar = gunzipSync(rawArchive([{ path: "a.txt", type: "File", body: "a\n" }]));
    const padded = gzipSync(Buffer.concat([tar, Buffer.alloc(20 * 512)]));
    const answer = await extract(server, padded);
    expect(answer.status).toBe(200);
    expect(readdirSync(server.workspace)).toEqual(["a.txt"]);
  });
});

describe("a body dripped in and never finished", () => {
  it("ends at the extraction's deadline with EXTRACTION_TIMEOUT, and the server answers meanwhile", async () => {
    writeFileSync(join(slow.workspace, "kept.txt"), "kept\n");
    const archive = rawArchive([{ path: "big.bin", type: "File", body: "x".repeat(64 * 1024) }]);
    const answer = new Promise<{ status: number; code: string }>((resolve, reject) => {
      const req = request(`${slow.url}${ARCHIVE_ROUTES.extract}?clear=true`, { method: "PUT" }, (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => {
          clearInterval(drip);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { code: string }).code });
        });
      });
      req.on("error", reject);
      // A few bytes now and then: the body never ends on its own.
      let at = 0;
      const drip = setInterval(() => {
        if (at < archive.length - 1) req.write(archive.subarray(at, (at += 8)));
      }, 100);
    });
    expect((await call(slow.url, "POST", "/api/execute", { command: "echo meanwhile" })).body).toMatchObject({ stdout: "meanwhile\n" });
    expect(await answer).toEqual({ status: 408, code: "EXTRACTION_TIMEOUT" });
    expect(readdirSync(slow.workspace)).toEqual(["kept.txt"]);
  });
});
