/**
 * File throughput through the container server (its own process, over loopback HTTP) beside plain
 * `fs` on the same filesystem in the same run: streamed upload/download of a large file, and JSON
 * writes/reads of small ones. Runs alternate so machine noise spreads over both columns.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { keepAliveAgent, mbPerSecond, median, nowMs, postJson, startServerProcess } from "./support.ts";
import type { BenchModule, BenchRow } from "./types.ts";

const MiB = 1024 * 1024;
const LARGE = 256 * MiB;
const SMALL = 256 * 1024;
const ROUNDS = 3;
const SMALL_FILES = 40;

/** One reusable 1 MiB chunk: the bench measures moving bytes, not making them. */
const CHUNK = Buffer.alloc(MiB, 0x5a);

function upload(url: string, path: string, size: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/files/stream?path=${encodeURIComponent(path)}`, {
      method: "PUT",
      agent: keepAliveAgent,
      headers: { "content-type": "application/octet-stream", "content-length": size },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`upload failed: ${res.statusCode}`))));
    });
    req.on("error", reject);
    void (async () => {
      for (let sent = 0; sent < size; sent += CHUNK.length) {
        if (!req.write(CHUNK)) await once(req, "drain");
      }
      req.end();
    })();
  });
}

function download(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${url}/api/files/stream?path=${encodeURIComponent(path)}`, { agent: keepAliveAgent }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => resolve(bytes));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

async function fsWrite(file: string, size: number): Promise<void> {
  const out = createWriteStream(file);
  for (let sent = 0; sent < size; sent += CHUNK.length) {
    if (!out.write(CHUNK)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
}

async function fsRead(file: string): Promise<number> {
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) bytes += (chunk as Buffer).length;
  return bytes;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = nowMs();
  await fn();
  return nowMs() - t0;
}

/** `aimMBps`: the rate a large file must reach (100 MB in about a second) — fs itself is page-cache speed. */
function row(metric: string, bytes: number, ours: number[], baseline: number[], aimMBps?: number): BenchRow {
  const oursRate = mbPerSecond(bytes, median(ours));
  const baseRate = mbPerSecond(bytes, median(baseline));
  const result: BenchRow = {
    metric,
    ours: `${oursRate.toFixed(0)} MB/s`,
    baseline: `${baseRate.toFixed(0)} MB/s`,
  };
  if (aimMBps !== undefined) {
    result.target = `≥ ${aimMBps} MB/s`;
    result.met = oursRate >= aimMBps;
  }
  return result;
}

const bench: BenchModule = {
  name: "files-throughput",
  async run() {
    const server = await startServerProcess();
    const plain = mkdtempSync(join(tmpdir(), "sandbox-bench-fs-"));
    try {
      const times = { up: [] as number[], fsUp: [] as number[], down: [] as number[], fsDown: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        times.up.push(await timed(() => upload(server.url, "large.bin", LARGE)));
        times.fsUp.push(await timed(() => fsWrite(join(plain, "large.bin"), LARGE)));
        times.down.push(await timed(async () => {
          if ((await download(server.url, "large.bin")) !== LARGE) throw new Error("short download");
        }));
        times.fsDown.push(await timed(async () => {
          if ((await fsRead(join(plain, "large.bin"))) !== LARGE) throw new Error("short read");
        }));
      }

      const small = Buffer.alloc(SMALL, 0x61).toString("utf8");
      const json = { write: [] as number[], fsWrite: [] as number[], read: [] as number[], fsRead: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        json.write.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(server.url, "/api/files/write", { path: `small/${i}.txt`, content: small });
        }));
        json.fsWrite.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await writeFile(join(plain, `${i}.txt`), small);
        }));
        json.read.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(server.url, "/api/files/read", { path: `small/${i}.txt` });
        }));
        json.fsRead.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await readFile(join(plain, `${i}.txt`), "utf8");
        }));
      }

      return [
        {
          title: `File throughput: ${LARGE / MiB} MiB streamed, ${SMALL_FILES} × ${SMALL / 1024} KiB as JSON (median of ${ROUNDS})`,
          baselineLabel: "node:fs on the same filesystem",
          rows: [
            row("streamed write (PUT /api/files/stream)", LARGE, times.up, times.fsUp, 100),
            row("streamed read (GET /api/files/stream)", LARGE, times.down, times.fsDown, 100),
            row("JSON write (POST /api/files/write)", SMALL * SMALL_FILES, json.write, json.fsWrite),
            row("JSON read (POST /api/files/read)", SMALL * SMALL_FILES, json.read, json.fsRead),
          ],
          notes: [
            "Streamed writes go to a temporary file renamed into place when complete (atomic); fs writes the target directly.",
            "Both sides read back from the page cache; the server adds loopback HTTP and, for JSON, encoding.",
          ],
        },
      ];
    } finally {
      await server.close();
      rmSync(plain, { recursive: true, force: true });
    }
  },
};

export default bench;
