/**
 * Streamed file routes: 100 MB written and read back in chunks while the server's memory stays
 * small, content types and HEAD, upload options in the query, an upload cut off while its bytes are
 * being written (the old file left intact, no temporary file behind), and the upload limit both
 * declared (413 before reading) and reached midway (the old file left intact).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { request } from "node:http";
import { PassThrough } from "node:stream";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

const MiB = 1024 * 1024;

let t: SandboxServer;
beforeAll(async () => {
  t = await startSandbox({ maxStreamedFileBytes: 128 * MiB });
});
afterAll(() => t.close());

/**
 * `size` bytes of a deterministic pattern, made one chunk at a time (the test never holds the file),
 * with an optional pause after `pauseAt` bytes until `resume` resolves.
 */
function patternStream(size: number, hash: ReturnType<typeof createHash>, pause?: { at: number; until: () => Promise<void> }) {
  let sent = 0;
  let paused = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pause && !paused && sent >= pause.at) {
        paused = true;
        await pause.until();
      }
      if (sent >= size) {
        controller.close();
        return;
      }
      const length = Math.min(MiB, size - sent);
      const chunk = Buffer.alloc(length);
      for (let i = 0; i < length; i += 4) chunk.writeUInt32LE((sent + i) >>> 0, i);
      hash.update(chunk);
      sent += length;
      controller.enqueue(chunk);
    },
  });
}

async function upload(path: string, body: ReadableStream<Uint8Array> | Uint8Array, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.url}/api/files/stream?path=${encodeURIComponent(path)}`, {
    method: "PUT",
    body,
    headers: { "content-type": "application/octet-stream", ...headers },
    duplex: "half",
  } as RequestInit);
  return { status: response.status, body: await response.json() };
}

/**
 * The client of the 100 MB test, in its own process so that the memory this test measures is the
 * server's alone. It uploads a deterministic pattern made chunk by chunk, pausing after half until
 * it reads a line on stdin, then downloads the file; it prints the sha256 of what it sent and got.
 */
const CLIENT = `
const http = require("node:http");
const { createHash } = require("node:crypto");
const [url, size] = [process.argv[1], Number(process.argv[2])];
const MiB = 1024 * 1024;
const resume = new Promise((resolve) => process.stdin.once("data", resolve));
async function main() {
  const sent = createHash("sha256");
  const uploaded = await new Promise((resolve, reject) => {
    const req = http.request(url, { method: "PUT", headers: { "content-type": "application/octet-stream" } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    (async () => {
      for (let offset = 0; offset < size; offset += MiB) {
        if (offset === size / 2) {
          process.stdout.write(JSON.stringify({ paused: true }) + "\\n");
          await resume;
        }
        const chunk = Buffer.alloc(MiB);
        for (let i = 0; i < MiB; i += 4) chunk.writeUInt32LE((offset + i) >>> 0, i);
        sent.update(chunk);
        if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
      }
      req.end();
    })().catch(reject);
  });
  const got = createHash("sha256");
  const download = await new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let bytes = 0;
      let chunks = 0;
      res.on("data", (d) => { got.update(d); bytes += d.length; chunks++; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, bytes, chunks }));
    }).on("error", reject);
  });
  process.stdout.write(JSON.stringify({ uploaded, sent: sent.digest("hex"), download, got: got.digest("hex") }) + "\\n");
}
main().catch((error) => { console.error(error); process.exit(1); });
`;

describe("streamed files", () => {
  it("writes and reads back 100 MB in chunks, never holding the file in memory", async () => {
    const size = 100 * MiB;
    const dir = join(t.workspace, "big");
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const client = spawn(process.execPath, ["-e", CLIENT, `${t.url}/api/files/stream?path=big/file.bin`, String(size)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    try {
      const lines = client.stdout.pipe(new PassThrough()).setEncoding("utf8");
      const messages = (async function* () {
        let buffer = "";
        for await (const text of lines) {
          buffer += text;
          let newline: number;
          while ((newline = buffer.indexOf("\n")) !== -1) {
            yield JSON.parse(buffer.slice(0, newline));
            buffer = buffer.slice(newline + 1);
          }
        }
      })();
      expect((await messages.next()).value).toEqual({ paused: true });
      // Halfway through the upload the server already has the bytes on disk, in a temporary file
      // beside the target; the target itself does not exist until the upload is complete.
      const partialOnDisk = await eventually(() => {
        const partial = existsSync(dir) ? readdirSync(dir).find((name) => name.startsWith(".file.bin.upload-")) : undefined;
        return partial !== undefined && statSync(join(dir, partial)).size >= 40 * MiB;
      }, 10_000);
      expect(partialOnDisk).toBe(true);
      expect(existsSync(join(dir, "file.bin"))).toBe(false);
      client.stdin.end("go\n");

      const result = (await messages.next()).value;
      expect(result.uploaded).toMatchObject({ status: 200, body: { success: true, bytesWritten: size, path: join(dir, "file.bin") } });
      expect(statSync(join(dir, "file.bin")).size).toBe(size);
      expect(readdirSync(dir)).toEqual(["file.bin"]);
      expect(result.download).toMatchObject({ status: 200, bytes: size });
      expect(result.download.headers).toMatchObject({ "content-length": String(size), "content-type": "application/octet-stream", "x-file-binary": "true" });
      expect(result.download.chunks).toBeGreaterThan(10);
      expect(result.got).toBe(result.sent);
    } finally {
      clearInterval(sampler);
      client.kill();
    }
    // Holding the file anywhere in the server would add 100 MB or more; streaming peaks at about 45
    // (garbage chunks the collector has not reclaimed yet), more when the machine is busy.
    expect(peak - baseline).toBeLessThan(90 * MiB);
  });

  it("serves text with a charset and HEAD without a body", async () => {
    writeFileSync(join(t.workspace, "page.html"), "<p>hé</p>");
    const response = await fetch(`${t.url}/api/files/stream?path=page.html`);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await response.text()).toBe("<p>hé</p>");
    const head = await fetch(`${t.url}/api/files/stream?path=page.html`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-file-size")).toBe("10");
    expect(await head.text()).toBe("");
  });

  it("uploads with createParents=false and a mode from the query", async () => {
    const missing = await upload("nope/x.bin", Buffer.from("x"), {});
    expect(missing.status).toBe(200); // parents are created by default
    const refused = await fetch(`${t.url}/api/files/stream?path=absent/x.bin&createParents=false`, { method: "PUT", body: "x" });
    expect(refused.status).toBe(404);
    const withMode = await fetch(`${t.url}/api/files/stream?path=run.sh&mode=0700`, { method: "PUT", body: "echo hi" });
    expect(withMode.status).toBe(200);
    expect(statSync(join(t.workspace, "run.sh")).mode & 0o777).toBe(0o700);
    expect((await fetch(`${t.url}/api/files/stream`, { method: "PUT", body: "x" })).status).toBe(400);
    expect((await fetch(`${t.url}/api/files/stream?path=missing.bin`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/files/stream?path=big`)).status).toBe(409);
  });
});

describe("an upload cut off mid-way", () => {
  it("leaves the old file untouched and no temporary file behind, with writes still in flight", async () => {
    const dir = join(t.workspace, "cut");
    mkdirSync(dir);
    writeFileSync(join(dir, "keep.bin"), "original");
    const temporary = () => readdirSync(dir).find((name) => name.startsWith(".keep.bin.upload-"));
    for (let attempt = 0; attempt < 3; attempt++) {
      const req = request(`${t.url}/api/files/stream?path=cut/keep.bin`, {
        method: "PUT",
        headers: { "content-type": "application/octet-stream", "content-length": String(64 * MiB) },
      });
      const settled = new Promise<void>((resolve) => {
        req.on("error", () => resolve());
        req.on("response", (res) => {
          res.resume();
          res.on("end", () => resolve());
          res.on("error", () => resolve());
        });
      });
      const chunk = Buffer.alloc(MiB, 0x5a);
      for (let sent = 0; sent < 8 * MiB; sent += MiB) req.write(chunk);
      // Batches are on disk already: the server is writing this upload as it reads it.
      expect(await eventually(() => {
        const name = temporary();
        return name !== undefined && statSync(join(dir, name)).size >= 2 * MiB;
      }, 20_000)).toBe(true);
      // More bytes, then the connection is gone while the server still reads and writes them.
      for (let sent = 0; sent < 4 * MiB; sent += MiB) req.write(chunk);
      req.destroy();
      await settled;
      expect(await eventually(() => temporary() === undefined, 10_000)).toBe(true);
      expect(readFileSync(join(dir, "keep.bin"), "utf8")).toBe("original");
    }
    expect(readdirSync(dir)).toEqual(["keep.bin"]);
    // The server is still healthy, and the same file can be written whole afterwards.
    expect((await upload("cut/keep.bin", Buffer.alloc(3 * MiB, 0x61))).status).toBe(200);
    expect(statSync(join(dir, "keep.bin")).size).toBe(3 * MiB);
    expect(readdirSync(dir)).toEqual(["keep.bin"]);
  });
});

describe("streamed upload limits", () => {
  let small: SandboxServer;
  beforeAll(async () => {
    small = await startSandbox({ maxStreamedFileBytes: MiB });
  });
  afterAll(() => small.close());

  it("refuses a declared size over the limit before reading it (413)", async () => {
    const response = await fetch(`${small.url}/api/files/stream?path=too-big.bin`, { method: "PUT", body: Buffer.alloc(2 * MiB) });
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe("PAYLOAD_TOO_LARGE");
    expect(existsSync(join(small.workspace, "too-big.bin"))).toBe(false);
  });

  it("stops a chunked upload at the limit and keeps the old file intact", async () => {
    writeFileSync(join(small.workspace, "keep.bin"), "original");
    let status: number | undefined;
    try {
      const response = await fetch(`${small.url}/api/files/stream?path=keep.bin`, {
        method: "PUT",
        body: patternStream(4 * MiB, createHash("sha256")),
        duplex: "half",
      } as RequestInit);
      status = response.status;
      expect((await response.json()).code).toBe("PAYLOAD_TOO_LARGE");
    } catch {
      // The server may close the connection while the client is still sending: also a refusal.
    }
    if (status !== undefined) expect(status).toBe(413);
    expect(readFileSync(join(small.workspace, "keep.bin"), "utf8")).toBe("original");
    expect(await eventually(() => readdirSync(small.workspace).every((name) => !name.includes(".upload-")))).toBe(true);
    // The server is still healthy afterwards.
    expect((await fetch(`${small.url}/api/ping`)).status).toBe(200);
  });
});
