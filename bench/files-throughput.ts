/**
 * File throughput through the container server (its own process, over loopback HTTP) beside plain
 * `fs` on the same filesystem in the same run: streamed upload/download of a large file, and JSON
 * writes/reads of small ones. Runs alternate so machine noise spreads over both columns.
 */
import { spawn } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { SERVER_NODE_FLAGS } from "../server-kit/node-flags.ts";
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

/**
 * The floor under each row: a bare node:http server in its own process, over the same client and
 * connection kind. For the streamed rows it receives the upload's bytes and drops them (what HTTP on
 * loopback costs before any file is touched), or sends the file's size in 1 MiB chunks of one buffer
 * in memory (before any file is read). For the JSON rows it reads a body whole and answers `{}` (a
 * write), or answers a 256 KiB string as JSON (a read). Started with the container server's Node flags.
 */
const BARE_SERVER = `
import { createServer } from "node:http";
const big = JSON.stringify({ content: "a".repeat(${SMALL}) });
const chunk = Buffer.alloc(${MiB}, 0x5a);
async function send(res, size) {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
  for (let sent = 0; sent < size; sent += chunk.length) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}
createServer({ keepAliveTimeout: 65000, noDelay: true }, (req, res) => {
  if (req.url.startsWith("/api/files/stream")) {
    if (req.method === "GET") return void send(res, ${LARGE});
    req.on("data", () => {});
    req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": 2 }).end("{}"));
    return;
  }
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString());
    const body = req.url === "/read" ? big : "{}";
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(0, "127.0.0.1", function () { console.log("listening on http://127.0.0.1:" + this.address().port); });
`;

async function startBareServer(): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, "--input-type=module", "-e", BARE_SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /listening on (http:\/\/\S+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`bare server exited early (${code})`)));
  });
  return { url, close: () => void child.kill() };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = nowMs();
  await fn();
  return nowMs() - t0;
}

/**
 * `share`: the part of node:fs's rate ours must reach in the same run. Loopback HTTP has a fixed cost
 * per request that fs has not, so the small JSON files are held to less than the large streamed one.
 */
function row(metric: string, bytes: number, ours: number[], baseline: number[], share: number): BenchRow {
  const oursRate = mbPerSecond(bytes, median(ours));
  const baseRate = mbPerSecond(bytes, median(baseline));
  return {
    metric,
    ours: `${oursRate.toFixed(0)} MB/s (${((100 * oursRate) / baseRate).toFixed(0)}%)`,
    baseline: `${baseRate.toFixed(0)} MB/s`,
    target: `≥ ${(share * 100).toFixed(0)}% of node:fs`,
    met: oursRate >= share * baseRate,
  };
}

/** The bare server's write / read rates of `bytes`, each beside node:fs's. */
function floorRow(metric: string, bytes: number, write: number[], read: number[], fsWrite: number[], fsRead: number[]): BenchRow {
  const rate = (samples: number[]) => mbPerSecond(bytes, median(samples));
  const share = (ours: number[], base: number[]) => ((100 * rate(ours)) / rate(base)).toFixed(0);
  return {
    metric,
    ours: `${rate(write).toFixed(0)} / ${rate(read).toFixed(0)} MB/s (${share(write, fsWrite)}% / ${share(read, fsRead)}%)`,
    baseline: `${rate(fsWrite).toFixed(0)} / ${rate(fsRead).toFixed(0)} MB/s`,
  };
}

const bench: BenchModule = {
  name: "files-throughput",
  async run() {
    const server = await startServerProcess();
    const bare = await startBareServer();
    const plain = mkdtempSync(join(tmpdir(), "sandbox-bench-fs-"));
    try {
      const times = { up: [] as number[], fsUp: [] as number[], bareUp: [] as number[], down: [] as number[], fsDown: [] as number[], bareDown: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        times.up.push(await timed(() => upload(server.url, "large.bin", LARGE)));
        times.fsUp.push(await timed(() => fsWrite(join(plain, "large.bin"), LARGE)));
        times.bareUp.push(await timed(() => upload(bare.url, "large.bin", LARGE)));
        times.down.push(await timed(async () => {
          if ((await download(server.url, "large.bin")) !== LARGE) throw new Error("short download");
        }));
        times.fsDown.push(await timed(async () => {
          if ((await fsRead(join(plain, "large.bin"))) !== LARGE) throw new Error("short read");
        }));
        times.bareDown.push(await timed(async () => {
          if ((await download(bare.url, "large.bin")) !== LARGE) throw new Error("short bare download");
        }));
      }

      const small = Buffer.alloc(SMALL, 0x61).toString("utf8");
      const json = { write: [] as number[], fsWrite: [] as number[], read: [] as number[], fsRead: [] as number[], bareWrite: [] as number[], bareRead: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        json.write.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(server.url, "/api/files/write", { path: `small/${i}.txt`, content: small });
        }));
        json.fsWrite.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await writeFile(join(plain, `${i}.txt`), small);
        }));
        json.bareWrite.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(bare.url, "/write", { path: `small/${i}.txt`, content: small });
        }));
        json.read.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(server.url, "/api/files/read", { path: `small/${i}.txt` });
        }));
        json.fsRead.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await readFile(join(plain, `${i}.txt`), "utf8");
        }));
        json.bareRead.push(await timed(async () => {
          for (let i = 0; i < SMALL_FILES; i++) await postJson(bare.url, "/read", { path: `small/${i}.txt` });
        }));
      }

      return [
        {
          title: `File throughput: ${LARGE / MiB} MiB streamed, ${SMALL_FILES} × ${SMALL / 1024} KiB as JSON (median of ${ROUNDS})`,
          baselineLabel: "node:fs on the same filesystem",
          rows: [
            row("streamed write (PUT /api/files/stream)", LARGE, times.up, times.fsUp, 0.7),
            row("streamed read (GET /api/files/stream)", LARGE, times.down, times.fsDown, 0.7),
            floorRow("… the HTTP floor: a bare node:http server dropping the upload's bytes / sending them from memory", LARGE, times.bareUp, times.bareDown, times.fsUp, times.fsDown),
            row("JSON write (POST /api/files/write)", SMALL * SMALL_FILES, json.write, json.fsWrite, 0.4),
            row("JSON read (POST /api/files/read)", SMALL * SMALL_FILES, json.read, json.fsRead, 0.4),
            floorRow("… the HTTP floor: a bare node:http server reading the write's body / answering a read's JSON", SMALL * SMALL_FILES, json.bareWrite, json.bareRead, json.fsWrite, json.fsRead),
          ],
          notes: [
            "Streamed: ours sends 1 MiB chunks over a keep-alive HTTP connection to the server (its own process), which writes them to a temporary file renamed into place when complete (atomic), and reads the file back as one response; node:fs writes the same chunks to the target with a write stream and reads it back with a read stream (256 KiB chunks).",
            "JSON: ours is one call at a time as a client would make it, over a keep-alive connection: JSON.stringify of `{path, content}` sent as a POST, the answer read whole and JSON.parse'd (for reads, the content string in it); the server walks the path by directory handles, writes atomically (temporary file, rename) and answers in JSON. node:fs is fs.promises.writeFile / readFile(…, \"utf8\") of the same 256 KiB string, one file at a time.",
            "The floor rows: a bare node:http server (its own process, the server's Node flags) that does only the HTTP: it drops an upload's bytes and sends a download's from one buffer in memory, or parses a JSON body and answers a fixed JSON, over the same client; what ours can reach at most.",
            "Both sides read back from the page cache.",
          ],
        },
      ];
    } finally {
      bare.close();
      await server.close();
      rmSync(plain, { recursive: true, force: true });
    }
  },
};

export default bench;
