/**
 * The egress proxy passes bodies through unparsed, so request smuggling is attacked here for real:
 * raw bytes written from inside a bwrap sandbox to its only way out, and a real HTTP server (Node's
 * own parser) behind the proxy's test name map, reporting every request it read. A request for a
 * denied host packed after an allowed one, hidden in a body, or behind framing two parsers read two
 * ways must never reach a server; a server's bytes after its answer must never pass for the next
 * answer; and the audit trail must count each body's bytes exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttp, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { createServer as createHttps } from "node:https";
import { createServer as createTcp, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { networkPolicySchema, type AuditEntry } from "../../protocol/network.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { call, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";
import { upstreamCertificates } from "./upstream-certificates.ts";

const bwrap = detectIsolation().bwrap.available;
const KEY = "egress-smuggling";

/** What the servers behind the proxy read: every request head, and each body once it ended. */
interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  /** The proxy's side of the connection the request came on. */
  port: number;
  body?: string;
}
const seen: Seen[] = [];
let liarConnections = 0;
/** What /random answers: bytes that show any reordering or reuse of memory on the way. */
const RANDOM = randomBytes(6 * 1024 * 1024 + 12_345);

let dataDir: DataDir;
let runtime: RunningRuntime;
let web: HttpServer;
let secure: ReturnType<typeof createHttps>;
let liar: TcpServer;
let certDir: string;
let sandbox: { url: string; secret: string };

function serve(req: IncomingMessage, res: ServerResponse): void {
  const entry: Seen = { method: req.method!, url: req.url!, host: req.headers.host, port: req.socket.remotePort! };
  seen.push(entry);
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    entry.body = body.toString("latin1");
    const url = new URL(req.url!, "http://x");
    if (url.pathname === "/sized") {
      res.end(Buffer.alloc(Number(url.searchParams.get("n")), 97));
      return;
    }
    if (url.pathname === "/random") {
      res.end(RANDOM);
      return;
    }
    if (url.pathname === "/chunked-answer") {
      // No length: Node frames it chunked, three chunks of 1000 bytes.
      res.write("a".repeat(1000));
      res.write("b".repeat(1000));
      res.end("c".repeat(1000));
      return;
    }
    res.end(JSON.stringify({ url: req.url, host: req.headers.host, bytes: body.length, sha256: createHash("sha256").update(body).digest("hex") }));
  });
}

/**
 * Writes `payload` (base64) to host:port from inside the sandbox, over TLS to `name` when asked,
 * and prints every byte that came back until the connection closed or went quiet.
 */
const RAW_CLIENT = `
import base64, json, socket, ssl, sys
host, port, name, payload = sys.argv[1], int(sys.argv[2]), sys.argv[3], base64.b64decode(sys.argv[4])
s = socket.create_connection((host, port), timeout=5)
if name != "-":
    s = ssl.create_default_context().wrap_socket(s, server_hostname=name)
s.sendall(payload)
s.settimeout(3)
got = b""
try:
    while True:
        data = s.recv(65536)
        if not data: break
        got += data
except (socket.timeout, ConnectionResetError):
    pass
print(json.dumps(got.decode("latin1")))
`.replace(/'/g, "'\\''");

/** What came back for `payload` sent raw to api.test:80 (or over TLS to secure.test:443). */
async function raw(payload: string, target: "api" | "secure" | "liar" = "api"): Promise<string> {
  const [host, port, name] = target === "secure" ? ["198.18.0.3", 443, "secure.test"] : target === "liar" ? ["198.18.0.4", 80, "-"] : ["198.18.0.1", 80, "-"];
  const { stdout, stderr } = await sh(`/usr/bin/python3 -c '${RAW_CLIENT}' ${host} ${port} ${name} ${Buffer.from(payload, "latin1").toString("base64")}`);
  expect(stdout, stderr).not.toBe("");
  return JSON.parse(stdout) as string;
}

/** The status lines in what came back, in order. */
const statuses = (answer: string) => [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));

async function sh(command: string): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  return (await call(sandbox.url, "POST", "/api/execute", { command, timeout: 20_000 }, sandbox.secret)).body as { stdout: string; stderr: string; exitCode: number };
}

async function auditAfter(since: number): Promise<AuditEntry[]> {
  return ((await runtimeCall(runtime, "GET", `/containers/${KEY}/egress/audit?since=${since}`)).body as { entries: AuditEntry[] }).entries;
}

const lastSeq = async () => ((await runtimeCall(runtime, "GET", `/containers/${KEY}/egress/audit?since=0&limit=1000`)).body as { entries: AuditEntry[] }).entries.at(-1)?.seq ?? 0;

const SMUGGLED = "GET /smuggled HTTP/1.1\r\nHost: denied.test\r\n\r\n";
const neverSmuggled = () => expect(seen.filter((entry) => entry.host === "denied.test" || entry.url.startsWith("/smuggled"))).toEqual([]);

describe.skipIf(!bwrap)("request smuggling through the egress proxy", () => {
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), "egress-smuggling-certs-"));
    const certs = upstreamCertificates(certDir, "secure.test");
    web = createHttp(serve);
    secure = createHttps({ key: certs.key, cert: certs.cert }, serve);
    // A server that answers every request with more than its Content-Length says: a forged second answer.
    liar = createTcp((socket) => {
      liarConnections++;
      socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nforged!"));
      socket.on("error", () => undefined);
    });
    const listen = async (server: HttpServer | TcpServer) => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as { port: number }).port;
    };
    const [webPort, securePort, liarPort] = [await listen(web), await listen(secure), await listen(liar)];
    dataDir = tempDataDir();
    runtime = await startRuntime({
      dataDir: dataDir.path,
      isolation: "bwrap",
      // Mapped names get 198.18.0.1, .2, … in this order: api.test, denied.test, secure.test, liar.test.
      egressTestHosts: {
        hosts: { "api.test:80": `127.0.0.1:${webPort}`, "denied.test": `127.0.0.1:${webPort}`, "secure.test:443": `127.0.0.1:${securePort}`, "liar.test:80": `127.0.0.1:${liarPort}` },
        ca: certs.ca,
      },
    });
    const policy = networkPolicySchema.parse({
      default: "deny",
      rules: [
        { action: "allow", host: "api.test", ports: [80] },
        { action: "allow", host: "liar.test", ports: [80] },
        { action: "allow", host: "secure.test", ports: [443] },
      ],
    });
    const started = await runtimeCall(runtime, "POST", `/containers/${KEY}/start`, { isolation: { allowNetwork: true }, egress: { policy, secrets: {} } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const body = started.body as { ports: Record<string, number>; secret: string };
    sandbox = { url: `http://127.0.0.1:${body.ports["3000"]}`, secret: body.secret };
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    dataDir?.remove();
    web?.close();
    secure?.close();
    liar?.close();
    rmSync(certDir, { recursive: true, force: true });
  });

  it("judges each request on a connection on its own: a denied host packed after an allowed one is refused", async () => {
    const since = await lastSeq();
    const answer = await raw(`GET /one HTTP/1.1\r\nHost: api.test\r\n\r\n${SMUGGLED}`);
    expect(statuses(answer)).toEqual([200, 403]);
    expect(answer).toContain("egress denied: GET http://denied.test:80/smuggled");
    expect(seen.at(-1)).toMatchObject({ method: "GET", url: "/one", host: "api.test" });
    neverSmuggled();
    expect(await auditAfter(since)).toEqual([
      expect.objectContaining({ kind: "http", host: "api.test", path: "/one", status: 200, decision: "allowed" }),
      expect.objectContaining({ kind: "http", host: "denied.test", path: "/smuggled", status: 403, decision: "denied", rule: "default" }),
    ]);
  });

  it("passes a request hidden in a body as body bytes, and judges the one after the body", async () => {
    for (const framing of ["length", "chunked"] as const) {
      const body = framing === "length" ? `Content-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}` : `Transfer-Encoding: chunked\r\n\r\n${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`;
      const answer = await raw(`POST /carrier HTTP/1.1\r\nHost: api.test\r\n${body}${SMUGGLED}`);
      expect(statuses(answer), framing).toEqual([200, 403]);
      expect(JSON.parse(answer.slice(answer.indexOf("{"), answer.indexOf("}") + 1))).toMatchObject({ url: "/carrier", bytes: SMUGGLED.length });
      expect(seen.at(-1)).toMatchObject({ method: "POST", url: "/carrier", host: "api.test", body: SMUGGLED });
    }
    neverSmuggled();
  });

  it("refuses a request framed two ways, or a head read two ways, before any of it reaches a server", async () => {
    const cases: [string, number][] = [
      [`POST /cl-te HTTP/1.1\r\nHost: api.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, 400],
      [`POST /te-cl HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 46\r\n\r\n0\r\n\r\n${SMUGGLED}`, 400],
      [`POST /cl-cl HTTP/1.1\r\nHost: api.test\r\nContent-Length: 0\r\nContent-Length: 46\r\n\r\n${SMUGGLED}`, 400],
      [`POST /te-space HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, 400],
      [`POST /te-fold HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: identity\r\n chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, 400],
      [`POST /te-x HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${SMUGGLED}`, 501],
      [`POST /te-last HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`, 501],
      [`GET /two-hosts HTTP/1.1\r\nHost: api.test\r\nHost: denied.test\r\n\r\n`, 400],
      [`GET /bare-lf HTTP/1.1\nHost: api.test\n\n${SMUGGLED}`, 400],
      [`GET http://denied.test/smuggled HTTP/1.1\r\nHost: api.test\r\n\r\n`, 400],
    ];
    const before = seen.length;
    for (const [payload, status] of cases) {
      const since = await lastSeq();
      const answer = await raw(payload);
      expect(statuses(answer), payload).toEqual([status]);
      expect(await auditAfter(since), payload).toEqual([expect.objectContaining({ decision: "denied", rule: "proxy", status, reason: expect.stringMatching(/^unreadable request: /) })]);
    }
    expect(seen.slice(before)).toEqual([]);
  });

  it("cuts a chunked body that lies about its sizes, and the request after it never goes out", async () => {
    const since = await lastSeq();
    const answer = await raw(`POST /lying HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc${SMUGGLED}0\r\n\r\n`);
    expect(statuses(answer)).toEqual([400]);
    expect(answer).toContain("malformed chunked body");
    neverSmuggled();
    expect((await auditAfter(since)).at(-1)).toMatchObject({ path: "/lying", status: 400, reason: expect.stringContaining("malformed chunked body") });
  });

  it("answers a client that ends its side once its request is sent", async () => {
    const script = `
import socket
s = socket.create_connection(("api.test", 80), timeout=5)
s.sendall(b"GET /half HTTP/1.1\\r\\nHost: api.test\\r\\n\\r\\n")
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    data = s.recv(65536)
    if not data: break
    got += data
print(got.decode())
`;
    const { stdout, stderr } = await sh(`/usr/bin/python3 -c '${script.replace(/'/g, "'\\''")}'`);
    expect(statuses(stdout), stderr).toEqual([200]);
    expect(stdout).toContain('"url":"/half"');
  });

  it("sends an absolute-form request to the server in origin form, judged by its host", async () => {
    const answer = await raw("GET http://api.test/absolute?q=1 HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n");
    expect(statuses(answer)).toEqual([200]);
    expect(seen.at(-1)).toMatchObject({ url: "/absolute?q=1", host: "api.test" });
  });

  it("ends the connection after an upgrade the server declined, so nothing packed behind it goes out", async () => {
    const answer = await raw(`GET /no-upgrade HTTP/1.1\r\nHost: api.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n${SMUGGLED}`);
    expect(statuses(answer)).toEqual([200]);
    expect(answer.toLowerCase()).toContain("connection: close");
    neverSmuggled();
  });

  it("holds every request over intercepted TLS to the name TLS asked for", async () => {
    const answer = await raw(`GET /tls-one HTTP/1.1\r\nHost: secure.test\r\n\r\n${SMUGGLED}`, "secure");
    expect(statuses(answer)).toEqual([200, 421]);
    expect(seen.at(-1)).toMatchObject({ url: "/tls-one", host: "secure.test" });
    neverSmuggled();
  });

  it("intercepts a ClientHello that comes late, rather than tunnelling it to the server as plain TCP", async () => {
    const since = await lastSeq();
    // The client connects, then says nothing for longer than a server-first protocol is waited for.
    const script = `
import socket, ssl, time
s = socket.create_connection(("198.18.0.3", 443), timeout=5)
time.sleep(1)
s = ssl.create_default_context().wrap_socket(s, server_hostname="secure.test")
s.sendall(b"GET /late-hello HTTP/1.1\\r\\nHost: secure.test\\r\\nConnection: close\\r\\n\\r\\n")
got = b""
while True:
    chunk = s.recv(65536)
    if not chunk: break
    got += chunk
print(got.decode())
`;
    const { stdout, stderr } = await sh(`/usr/bin/python3 -c '${script.replace(/'/g, "'\\''")}'`);
    expect(statuses(stdout), stderr).toEqual([200]);
    expect(seen.at(-1)).toMatchObject({ url: "/late-hello", host: "secure.test" });
    expect(await auditAfter(since)).toEqual([expect.objectContaining({ kind: "https", host: "secure.test", path: "/late-hello", decision: "allowed" })]);
  });

  it("never takes a server's bytes after its answer for the next answer", async () => {
    const connections = liarConnections;
    const answer = await raw("GET /a HTTP/1.1\r\nHost: liar.test\r\n\r\nGET /b HTTP/1.1\r\nHost: liar.test\r\nConnection: close\r\n\r\n", "liar");
    expect(statuses(answer)).toEqual([200, 200]);
    expect(answer).not.toContain("forged!");
    expect(answer.match(/\r\n\r\nok/g)).toHaveLength(2);
    // The connection that sent too much is not used again.
    expect(liarConnections - connections).toBe(2);
  });

  it("keeps an idle connection to a server for the sandbox's next connection to it", async () => {
    await sh("curl -sS -m 10 http://api.test/first && curl -sS -m 10 http://api.test/second");
    const [first, second] = seen.slice(-2);
    expect([first!.url, second!.url]).toEqual(["/first", "/second"]);
    expect(second!.port).toBe(first!.port);
  });

  it("counts the bytes of each body exactly, whatever its framing, and passes them unchanged", async () => {
    const since = await lastSeq();
    const script = `
import http.client, hashlib, json
body = bytes(range(256)) * 400
out = []
c = http.client.HTTPConnection("api.test", 80, timeout=10)
c.request("POST", "/upload", body=body); out.append(json.loads(c.getresponse().read()))
c.request("POST", "/upload-chunked", body=iter([body[:70000], body[70000:]]), encode_chunked=True, headers={"Transfer-Encoding": "chunked"}); out.append(json.loads(c.getresponse().read()))
c.request("GET", "/sized?n=54321"); out.append(len(c.getresponse().read()))
c.request("GET", "/chunked-answer"); r = c.getresponse(); out.append([r.getheader("transfer-encoding"), len(r.read())])
print(json.dumps([out, hashlib.sha256(body).hexdigest()]))
`;
    const { stdout, stderr } = await sh(`/usr/bin/python3 -c '${script.replace(/'/g, "'\\''")}'`);
    const [[upload, chunked, sized, chunkedAnswer], sha] = JSON.parse(stdout) as [[{ bytes: number; sha256: string }, { bytes: number; sha256: string }, number, [string, number]], string];
    expect(upload, stderr).toMatchObject({ bytes: 102_400, sha256: sha });
    expect(chunked).toMatchObject({ bytes: 102_400, sha256: sha });
    expect(sized).toBe(54_321);
    expect(chunkedAnswer).toEqual(["chunked", 3000]);
    const entries = (await auditAfter(since)).filter((entry) => entry.kind === "http");
    expect(entries.map(({ path, bytesOut, bytesIn, status }) => ({ path, bytesOut, bytesIn, status }))).toEqual([
      { path: "/upload", bytesOut: 102_400, bytesIn: expect.any(Number), status: 200 },
      { path: "/upload-chunked", bytesOut: 102_400, bytesIn: expect.any(Number), status: 200 },
      { path: "/sized", bytesOut: 0, bytesIn: 54_321, status: 200 },
      { path: "/chunked-answer", bytesOut: 0, bytesIn: 3000, status: 200 },
    ]);
  });

  it("passes downloads on byte for byte, many at once and one after another on a connection, plain and intercepted", async () => {
    const sha = createHash("sha256").update(RANDOM).digest("hex");
    const fetchAll = (scheme: string) => `(for i in 1 2 3; do curl -sS -m 30 ${scheme}/random | sha256sum & done; curl -sS -m 30 ${scheme}/random ${scheme}/random | sha256sum; wait)`;
    const { stdout, stderr } = await sh(`${fetchAll("http://api.test")}; ${fetchAll("https://secure.test")}`);
    const sums = stdout.trim().split("\n").map((line) => line.split(" ")[0]);
    const twice = createHash("sha256").update(RANDOM).update(RANDOM).digest("hex");
    expect(sums.filter((sum) => sum === sha), stderr).toHaveLength(6);
    expect(sums.filter((sum) => sum === twice)).toHaveLength(2);
  });

  it("passes a large upload that waits for 100 Continue, byte for byte", async () => {
    const since = await lastSeq();
    const { stdout, stderr } = await sh(
      "head -c 3000000 /dev/urandom > /tmp/up && sha256sum /tmp/up | cut -d' ' -f1 && curl -sS -m 20 -H 'Expect: 100-continue' --data-binary @/tmp/up http://api.test/big-upload",
    );
    const [sha, answer] = stdout.split("\n");
    expect(JSON.parse(answer!), stderr).toMatchObject({ url: "/big-upload", bytes: 3_000_000, sha256: sha });
    expect((await auditAfter(since)).at(-1)).toMatchObject({ path: "/big-upload", bytesOut: 3_000_000, status: 200 });
  });
});
