/**
 * A policy change cuts HTTP exchanges that are open when it comes, as it cuts raw TCP and
 * WebSockets: a download streaming into a sandbox and a chunked upload streaming out of it, both to
 * a host the new policy denies, stop at once (both sides' connections closed), and the audit entry
 * says the policy changed. Before, each went on to its end: only the next request was judged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { networkPolicySchema, type AuditEntry, type NetworkPolicyInput } from "../../protocol/network.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { call, eventually, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

const bwrap = detectIsolation().bwrap.available;
const KEY = "egress-change";

const policy = (input: NetworkPolicyInput) => networkPolicySchema.parse(input);
const ALLOWED = policy({ default: "deny", rules: [{ action: "allow", host: "stream.test", ports: [80], name: "stream" }] });
const DENIED = policy({ default: "deny", rules: [] });

/** What the server saw of each exchange: whether it began, bytes each way, and whether its connection went. */
const seen = { download: { bytes: 0, closed: false }, upload: { bytes: 0, closed: false } };

/** A download that never ends: a KiB every 100 ms. */
const DOWNLOAD = `
import sys, time, urllib.request
answer = urllib.request.urlopen("http://stream.test/download", timeout=30)
print("open", flush=True)
deadline = time.time() + 10
try:
    while time.time() < deadline:
        if not answer.read1(65536):
            print("ended"); break
    else:
        print("still flowing")
except Exception as error:
    print("cut", type(error).__name__)
`;

/** An upload that never ends: a chunk of a KiB every 100 ms. */
const UPLOAD = `
import http.client, time
connection = http.client.HTTPConnection("stream.test", 80, timeout=30)
connection.putrequest("POST", "/upload")
connection.putheader("Transfer-Encoding", "chunked")
connection.endheaders()
print("open", flush=True)
deadline = time.time() + 10
try:
    while time.time() < deadline:
        connection.send(b"400\\r\\n" + b"y" * 1024 + b"\\r\\n")
        time.sleep(0.1)
    print("still flowing")
except Exception as error:
    print("cut", type(error).__name__)
`;

let dataDir: DataDir;
let runtime: RunningRuntime;
let server: Server;
let sandbox: { url: string; secret: string };

async function setPolicy(input: ReturnType<typeof policy>): Promise<void> {
  expect((await runtimeCall(runtime, "PUT", `/containers/${KEY}/egress`, { policy: input, secrets: {} })).status).toBe(200);
}

async function audit(): Promise<AuditEntry[]> {
  return ((await runtimeCall(runtime, "GET", `/containers/${KEY}/egress/audit?since=0`)).body as { entries: AuditEntry[] }).entries;
}

/** Runs a Python script in the sandbox, in the background of the test: its stdout when it ends. */
function python(script: string): Promise<string> {
  const command = `python3 -c '${script.replace(/'/g, "'\\''")}'`;
  return call(sandbox.url, "POST", "/api/execute", { command, timeout: 30_000 }, sandbox.secret).then((answer) => (answer.body as { stdout: string }).stdout);
}

describe.skipIf(!bwrap)("a policy change", () => {
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/download") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.flushHeaders();
        const tick = setInterval(() => res.write("x".repeat(1024), () => (seen.download.bytes += 1024)), 100);
        res.once("close", () => {
          clearInterval(tick);
          seen.download.closed = true;
        });
        return;
      }
      req.on("data", (chunk: Buffer) => (seen.upload.bytes += chunk.length));
      req.once("end", () => res.end("whole"));
      res.once("close", () => (seen.upload.closed = true));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    dataDir = tempDataDir();
    runtime = await startRuntime({ dataDir: dataDir.path, isolation: "bwrap", egressTestHosts: { hosts: { "stream.test:80": `127.0.0.1:${port}` } } });
    const started = await runtimeCall(runtime, "POST", `/containers/${KEY}/start`, { isolation: { allowNetwork: true }, egress: { policy: ALLOWED, secrets: {} } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const body = started.body as { ports: Record<string, number>; secret: string };
    sandbox = { url: `http://127.0.0.1:${body.ports["3000"]}`, secret: body.secret };
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    dataDir?.remove();
    server?.closeAllConnections();
    server?.close();
  });

  it("cuts a streaming download and a chunked upload to a host it now denies", async () => {
    const download = python(DOWNLOAD);
    const upload = python(UPLOAD);
    // Both flowing: a few KiB each way.
    expect(await eventually(() => seen.download.bytes >= 4096 && seen.upload.bytes >= 4096, 15_000)).toBe(true);

    await setPolicy(DENIED);
    expect(await download).toMatch(/^open\n(cut \w+|ended)\n$/);
    expect(await upload).toMatch(/^open\ncut \w+\n$/);
    // The server's side of each was closed too: nothing of either goes on.
    expect(await eventually(() => seen.download.closed && seen.upload.closed, 10_000)).toBe(true);

    const cut = (await audit()).filter((entry) => entry.kind === "http" && entry.host === "stream.test");
    expect(cut.map((entry) => entry.path).sort()).toEqual(["/download", "/upload"]);
    for (const entry of cut) expect(entry.reason).toContain("the policy changed");
    await setPolicy(ALLOWED);
  }, 60_000);
});
