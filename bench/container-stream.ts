/**
 * Streamed output throughput: a fast writer through POST /api/execute/stream to a client that parses
 * every event the way our clients do (fetch + the protocol's readEventStream), to a minimal parsing
 * reader (node:http + the protocol's SseParser + JSON.parse) and to one that only takes the bytes,
 * against the same command writing to /dev/null, and against a bare relay of the same pipe over HTTP
 * with no framing at all (the most any server in Node could do on this machine).
 * The writer is `yes` with a long line cut by `head -c`: cheap to generate, so the pipe is the limit.
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import type { ExecEvent } from "../protocol/events.ts";
import { readEventStream, SseParser } from "../protocol/sse.ts";
import { Utf8ChunkDecoder } from "../protocol/utf8.ts";
import { keepAliveAgent, mbPerSecond, nowMs, startServerProcess } from "./support.ts";
import type { BenchModule } from "./types.ts";

const BYTES = 1024 * 1024 * 1024;
const LINE = "0123456789abcdef".repeat(64).slice(0, 1023);
export const fastWriter = (bytes: number) => `yes ${LINE} | head -c ${bytes}`;

function toDevNull(command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const child = spawn("bash", ["-c", command], { stdio: ["ignore", "ignore", "inherit"] });
    child.on("error", reject);
    child.on("close", () => resolve(nowMs() - t0));
  });
}

/** Tallies exec events: stdout bytes, and whether the stream ended with a successful complete. */
class ExecTally {
  bytes = 0;
  exitCode = -1;
  add(event: ExecEvent): void {
    if (event.type === "stdout") this.bytes += Buffer.byteLength(event.data);
    else if (event.type === "complete") this.exitCode = event.exitCode;
    else if (event.type === "truncated" || event.type === "error") throw new Error(`unexpected ${event.type} event`);
  }
  result(t0: number): [number, number] {
    if (this.exitCode !== 0) throw new Error(`exit code ${this.exitCode}`);
    return [this.bytes, nowMs() - t0];
  }
}

/**
 * Streams `command` through the server as a client of ours would read it: fetch, then the protocol's
 * readEventStream (every event parsed). Resolves with [stdout bytes received, milliseconds].
 */
export async function streamThrough(url: string, command: string): Promise<[number, number]> {
  const t0 = nowMs();
  const response = await fetch(`${url}/api/execute/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ command }),
  });
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status}`);
  const tally = new ExecTally();
  for await (const event of readEventStream<ExecEvent>(response.body)) tally.add(event);
  return tally.result(t0);
}

/** The least a parsing reader can do: node:http, the protocol's SseParser, JSON.parse per event. */
function streamMinimal(url: string, command: string): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const body = JSON.stringify({ command });
    const req = request(
      `${url}/api/execute/stream`,
      { method: "POST", agent: keepAliveAgent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        const parser = new SseParser();
        const decoder = new Utf8ChunkDecoder();
        const tally = new ExecTally();
        res.on("data", (chunk: Buffer) => {
          try {
            for (const message of parser.push(decoder.decode(chunk))) tally.add(JSON.parse(message.data) as ExecEvent);
          } catch (error) {
            reject(error);
            res.destroy();
          }
        });
        res.on("end", () => {
          try {
            resolve(tally.result(t0));
          } catch (error) {
            reject(error);
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A reader that only counts the SSE bytes, as the Durable Object relays them; resolves with milliseconds. */
function streamRaw(url: string, command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const body = JSON.stringify({ command });
    const req = request(
      `${url}/api/execute/stream`,
      { method: "POST", agent: keepAliveAgent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        let previous: Buffer = Buffer.alloc(0);
        let last: Buffer = Buffer.alloc(0);
        res.on("data", (chunk: Buffer) => {
          previous = last;
          last = chunk;
        });
        res.on("end", () => {
          const tail = Buffer.concat([previous, last]).toString("latin1");
          if (/event: complete\ndata: \{"type":"complete","timestamp":"[^"]+","seq":\d+,"exitCode":0,/.test(tail)) resolve(nowMs() - t0);
          else reject(new Error("no successful complete event"));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The ceiling: the same pipe relayed as raw bytes over HTTP by a minimal server in a child process. */
async function bareRelay(command: string): Promise<[number, number]> {
  const source = `
    const { createServer } = require("node:http"); const { spawn } = require("node:child_process");
    const s = createServer((req, res) => { res.writeHead(200);
      const c = spawn("bash", ["-c", ${JSON.stringify(command)}], { stdio: ["ignore", "pipe", "ignore"] });
      c.stdout.on("data", (d) => { if (!res.write(d)) { c.stdout.pause(); res.once("drain", () => c.stdout.resume()); } });
      c.on("close", () => res.end()); });
    s.listen(0, "127.0.0.1", () => console.log(s.address().port));`;
  const child = spawn(process.execPath, ["-e", source], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => child.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
  try {
    return await new Promise((resolve, reject) => {
      const t0 = nowMs();
      request(`http://127.0.0.1:${port}/`, (res) => {
        let bytes = 0;
        res.on("data", (chunk: Buffer) => (bytes += chunk.length));
        res.on("end", () => resolve([bytes, nowMs() - t0]));
      })
        .on("error", reject)
        .end();
    });
  } finally {
    child.kill();
  }
}

const bench: BenchModule = {
  name: "container-stream",
  async run() {
    const server = await startServerProcess();
    try {
      await streamThrough(server.url, fastWriter(64 * 1024 * 1024)); // warm up
      await streamMinimal(server.url, fastWriter(64 * 1024 * 1024));
      const devNullMs = await toDevNull(fastWriter(BYTES));
      const [relayBytes, relayMs] = await bareRelay(fastWriter(BYTES));
      const [bytes, oursMs] = await streamThrough(server.url, fastWriter(BYTES));
      const [minimalBytes, minimalMs] = await streamMinimal(server.url, fastWriter(BYTES));
      const rawMs = await streamRaw(server.url, fastWriter(BYTES));
      for (const [label, got] of [["ours", bytes], ["minimal reader", minimalBytes], ["relay", relayBytes]] as const) {
        if (got !== BYTES) throw new Error(`lost bytes (${label}): ${BYTES - got}`);
      }
      const ours = mbPerSecond(bytes, oursMs);
      const relay = mbPerSecond(relayBytes, relayMs);
      return [
        {
          title: "Streamed output throughput (1 GiB of `yes` lines through /api/execute/stream; the client parses every event)",
          baselineLabel: "same command > /dev/null",
          rows: [
            {
              metric: "throughput to a client of ours (fetch + protocol readEventStream)",
              ours: `${ours.toFixed(0)} MB/s`,
              baseline: `${mbPerSecond(BYTES, devNullMs).toFixed(0)} MB/s`,
              target: "≥ 250 MB/s",
              met: ours >= 250,
            },
            { metric: "time for 1 GiB", ours: `${(oursMs / 1000).toFixed(2)} s`, baseline: `${(devNullMs / 1000).toFixed(2)} s` },
            {
              metric: "throughput to a minimal parsing reader (node:http + protocol SseParser + JSON.parse)",
              ours: `${mbPerSecond(minimalBytes, minimalMs).toFixed(0)} MB/s`,
              baseline: "",
            },
            {
              metric: "throughput, reader takes the SSE bytes unparsed (as the Durable Object relays them)",
              ours: `${mbPerSecond(BYTES, rawMs).toFixed(0)} MB/s`,
              baseline: `${relay.toFixed(0)} MB/s (bare relay)`,
            },
            { metric: "bare pipe→HTTP relay in Node (no framing, no parsing): the ceiling here", ours: "", baseline: `${relay.toFixed(0)} MB/s` },
          ],
          notes: ["Server, client and writer share the machine's cores: a reader's parsing competes with the server for CPU."],
        },
      ];
    } finally {
      await server.close();
    }
  },
};

export default bench;
