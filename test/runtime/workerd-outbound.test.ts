/**
 * A container's outbound traffic through workerd's own interception, as on Cloudflare: a Durable
 * Object on workerd (Miniflare pointed at the runtime's Docker engine) registers
 * `interceptOutboundHttp`, `interceptOutboundHttps` and `interceptAllOutboundHttp` with a handler of
 * its Worker, and the container's `curl` requests reach that handler (method, path, headers, body),
 * the container getting the handler's answer. The egress sidecar the runtime emulates asks workerd's
 * egress listener about each connection; what no interception takes follows the container's
 * internet switch and the runtime's policy. Servers on loopback stand in for the internet (the
 * proxy's test name map): each counts what reached it, so a request the Worker should have had and
 * that reached one instead is seen. Then the walls: the handler is not got around by a Host that
 * disagrees with the TLS name, by an address literal, by a second request on a connection the Worker
 * passed by, and nothing in the sandbox reaches workerd's listener or any other loopback port of
 * the host; every connection the Worker took is in the audit trail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttp, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { createServer as createHttps, type Server as HttpsServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { networkPolicySchema, OPEN_POLICY, type AuditEntry } from "../../protocol/network.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { PROXY_LIMITS } from "../../runtime/egress/proxy-limits.ts";
import { PLACEHOLDER_ADDRESS, WORKER_RULE } from "../../runtime/egress/workerd-egress.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";
import { upstreamCertificates } from "./upstream-certificates.ts";
import { OUTBOUND_WORKER_SOURCE, packageModules } from "./workerd-outbound-worker.ts";

const bwrap = detectIsolation().bwrap.available;
const SECRET = "workerd-outbound-test-secret-0123456789";

let dataDir: DataDir;
let certDir: string;
let runtime: RunningRuntime;
let mf: Miniflare;
let web: HttpServer;
let secure: HttpsServer;
/** Requests that reached the stand-ins for the internet, as `host path`. */
const reached: string[] = [];

const listenOn = async (server: HttpServer | HttpsServer) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
};

async function box(name: string, op: string, body?: unknown): Promise<{ status: number; body: any }> {
  const search = new URLSearchParams({ secret: SECRET, box: name });
  const response = await mf.dispatchFetch(`http://worker/${op}?${search}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** Starts box `name`'s container with these interceptions and internet switch; its sandbox key. */
async function start(name: string, asked: { http?: string[]; https?: string[]; all?: boolean; internet: boolean }): Promise<string> {
  const started = await box(name, "start", asked);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  return started.body.id as string;
}

async function sh(name: string, command: string): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const answer = await box(name, "exec", { command, timeout: 20_000 });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as { stdout: string; stderr: string; exitCode: number };
}

/** What the Worker's handler said it saw, from curl's output (`-i`: the status line and headers, then the body). */
function handled(stdout: string): { status: number; handledBy: string | null; seen: any } {
  const [head, body] = stdout.split(/\r?\n\r?\n/, 2) as [string, string];
  const status = Number(/^HTTP\/[\d.]+ (\d+)/.exec(head)?.[1]);
  return { status, handledBy: /^x-handled-by: (.*)$/im.exec(head)?.[1]?.trim() ?? null, seen: body ? JSON.parse(body) : undefined };
}

async function audit(key: string): Promise<AuditEntry[]> {
  const page = (await runtimeCall(runtime, "GET", `/containers/${key}/egress/audit?since=0&limit=1000`)).body as { entries: AuditEntry[] };
  return page.entries;
}

describe.skipIf(!bwrap)("a container's outbound traffic through workerd's interception", () => {
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), "workerd-outbound-certs-"));
    const certs = upstreamCertificates(certDir, "secure.test");
    const respond = (scheme: string) => (req: IncomingMessage, res: ServerResponse) => {
      reached.push(`${scheme}://${req.headers.host} ${req.url}`);
      req.resume();
      res.end(JSON.stringify({ upstream: scheme, host: req.headers.host, url: req.url }));
    };
    web = createHttp(respond("http"));
    secure = createHttps({ key: certs.key, cert: certs.cert }, respond("https"));
    const [webPort, securePort] = [await listenOn(web), await listenOn(secure)];
    dataDir = tempDataDir();
    runtime = await startRuntime({
      dataDir: dataDir.path,
      isolation: "bwrap",
      stopGraceMs: 2_000,
      egressTestHosts: {
        hosts: {
          "open.test:80": `127.0.0.1:${webPort}`,
          "example.test:80": `127.0.0.1:${webPort}`,
          "secure.test:443": `127.0.0.1:${securePort}`,
        },
        ca: certs.ca,
      },
    });
    mf = new Miniflare(
      convertV4MiniflareOptions({
        containerEngine: { localDocker: { socketPath: runtime.engine.url, containerEgressInterceptorImage: "edge-sandbox/egress-sidecar:local" } },
        workers: [
          {
            name: "outbound",
            modules: true,
            script: OUTBOUND_WORKER_SOURCE,
            compatibilityDate: "2026-10-20",
            durableObjects: { BOX: { className: "Box", container: { imageName: "cloudflare-dev/box:outbound-test" } } },
          },
          {
            name: "pkg",
            modules: packageModules((path) => readFileSync(path, "utf8")),
            compatibilityDate: "2026-10-20",
            durableObjects: { PKG: { className: "Pkg", useSQLite: true, container: { imageName: "cloudflare-dev/pkg:outbound-test" } } },
          },
        ],
      }),
    );
    await mf.ready;
  }, 60_000);

  afterAll(async () => {
    await mf?.dispose();
    await runtime?.close();
    dataDir?.remove();
    web?.close();
    secure?.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  describe("with the internet on", () => {
    let key: string;
    beforeAll(async () => {
      key = await start("on", { http: ["example.test"], https: ["secure.test"], internet: true });
    }, 60_000);

    it("hands an intercepted host's HTTP request to the Worker, which sees its method, path, headers and body, and answers it", async () => {
      const { stdout, stderr } = await sh("on", "curl -sS -i -m 10 -X PUT -H 'X-Probe: plain' --data-binary 'hello worker' http://example.test/items/7?q=1");
      const answer = handled(stdout);
      expect(answer.status, stderr).toBe(207);
      expect(answer.handledBy).toBe("worker");
      expect(answer.seen).toMatchObject({ handler: "http example.test", method: "PUT", url: "http://example.test/items/7?q=1", body: "hello worker" });
      expect(answer.seen.headers).toMatchObject({ "x-probe": "plain", host: "example.test" });
      expect(reached.filter((line) => line.includes("example.test"))).toEqual([]);
    });

    it("hands an intercepted host's HTTPS request to the Worker, through TLS the container trusts", async () => {
      const { stdout, stderr } = await sh("on", "curl -sS -i -m 10 -X POST -H 'X-Probe: secure' --data-binary 'over tls' https://secure.test/s/1");
      const answer = handled(stdout);
      expect(answer.status, stderr).toBe(207);
      expect(answer.seen).toMatchObject({ handler: "https secure.test", method: "POST", url: "https://secure.test/s/1", body: "over tls" });
      expect(answer.seen.headers).toMatchObject({ "x-probe": "secure" });
      expect(reached.filter((line) => line.includes("secure.test"))).toEqual([]);
    });

    it("lets a host nobody intercepts follow the network settings: reached, the internet being on", async () => {
      const { stdout, stderr } = await sh("on", "curl -sS -m 10 http://open.test/direct");
      expect(JSON.parse(stdout), stderr).toEqual({ upstream: "http", host: "open.test", url: "/direct" });
      expect(reached).toContain("http://open.test /direct");
    });

    it("is not got around by an address literal with the intercepted Host, or by another address under the intercepted TLS name", async () => {
      const literal = handled((await sh("on", "curl -sS -i -m 10 -H 'Host: example.test' http://198.18.0.1/by-address")).stdout);
      expect(literal.seen).toMatchObject({ handler: "http example.test", url: "http://example.test/by-address" });
      const elsewhere = handled((await sh("on", "curl -sS -i -m 10 --connect-to secure.test:443:198.18.0.1:443 https://secure.test/elsewhere")).stdout);
      expect(elsewhere.seen).toMatchObject({ handler: "https secure.test", url: "https://secure.test/elsewhere" });
      expect(reached.filter((line) => /by-address|elsewhere/.test(line))).toEqual([]);
    });

    it("is not got around by a Host that disagrees with the TLS name the Worker passed by", async () => {
      const { stdout } = await sh("on", "curl -sS -i -m 10 -H 'Host: secure.test' https://open.test/lie");
      expect(stdout).toMatch(/^HTTP\/1.1 421/);
      expect(reached.filter((line) => line.includes("/lie"))).toEqual([]);
    });

    it("is not got around by a second request, to an intercepted host, on a connection the Worker passed by", async () => {
      const script = `
const net = require("net");
const s = net.connect(80, "open.test", () => s.write("GET /first HTTP/1.1\\r\\nHost: open.test\\r\\n\\r\\n"));
let got = "";
let asked = false;
s.on("data", (d) => {
  got += d;
  if (!asked && got.includes("/first")) { asked = true; s.write("GET /smuggled HTTP/1.1\\r\\nHost: example.test\\r\\n\\r\\n"); }
});
s.on("close", () => { console.log(JSON.stringify(got)); process.exit(0); });
setTimeout(() => { console.log(JSON.stringify(got)); process.exit(0); }, 8000);
`;
      const { stdout } = await sh("on", `node -e '${script.replace(/'/g, "'\\''")}'`);
      const got = JSON.parse(stdout.trim().split("\n")[0]!) as string;
      expect(got).toContain("/first");
      expect(got).toMatch(/HTTP\/1.1 421/);
      expect(reached.filter((line) => line.includes("/smuggled"))).toEqual([]);
    });

    it("lets nothing in the sandbox reach workerd's egress listener, the sidecar, or any other loopback port of the host", async () => {
      const workerd = runtime.pool.containerSettings.egress.of(key).workerd;
      expect(workerd?.port).toBeGreaterThan(0);
      const sidecar = runtime.engine.engine.list().find((container) => container.sidecar && container.key === key)?.proxy;
      expect(sidecar?.port).toBeGreaterThan(0);
      const ports = [workerd!.port, sidecar!.port, runtime.port];
      const tries = ports.flatMap((port) => [
        `curl -sS -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/ ; echo " rc=$?"`,
        `curl -sS -m 5 -o /dev/null -w '%{http_code}' http://localhost:${port}/ ; echo " rc=$?"`,
        `curl -sS -m 5 -o /dev/null -w '%{http_code}' -H 'Host: 127.0.0.1:${port}' http://198.18.0.1/ ; echo " rc=$?"`,
        `curl -sS -m 5 -o /dev/null -w '%{http_code}' -x http://open.test:80 http://127.0.0.1:${port}/ ; echo " rc=$?"`,
        `curl -sS -m 5 -o /dev/null -w '%{http_code}' -p -x http://open.test:80 http://127.0.0.1:${port}/ ; echo " rc=$?"`,
      ]);
      for (const command of tries) {
        const { stdout } = await sh("on", command);
        // Refused in the sandbox's own namespace (curl's 000), or refused by the egress (403, 421, 400, 405): never served.
        expect(stdout.trim(), command).toMatch(/^(000 rc=[1-9]\d*|4\d\d rc=0)$/);
      }
    });

    it("cuts a connection the Worker holds when a policy change denies its host", async () => {
      const script = `
const s = require("net").connect(80, "example.test", () => s.write("GET /held HTTP/1.1\\r\\nHost: example.test\\r\\n\\r\\n"));
let answered = false;
s.on("data", () => { if (!answered) { answered = true; console.log("answered"); } });
s.on("error", () => undefined);
s.on("close", () => { console.log("closed"); process.exit(0); });
setTimeout(() => { console.log("still open"); process.exit(0); }, 12000);
`;
      const held = sh("on", `node -e '${script.replace(/'/g, "'\\''")}'`);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const denied = await runtimeCall(runtime, "PUT", `/containers/${key}/egress`, { policy: networkPolicySchema.parse({ default: "allow", rules: [{ action: "deny", host: "example.test" }] }), secrets: {} });
      expect(denied.status).toBe(200);
      expect((await held).stdout).toBe("answered\nclosed\n");
      expect((await runtimeCall(runtime, "PUT", `/containers/${key}/egress`, { policy: OPEN_POLICY, secrets: {} })).status).toBe(200);
      expect((await audit(key)).findLast((entry) => entry.rule === WORKER_RULE && entry.host === "example.test")).toMatchObject({ reason: expect.stringContaining("the policy changed") });
    });

    it("counts the connections the Worker holds against the sandbox's cap", async () => {
      const cap = PROXY_LIMITS.connectionsPerSandbox;
      const script = `
const net = require("net");
let answered = 0, refused = 0;
const sockets = [];
for (let i = 0; i < ${cap + 40}; i++) {
  const s = net.connect(80, "example.test", () => s.write("GET /capped HTTP/1.1\\r\\nHost: example.test\\r\\n\\r\\n"));
  let got = "";
  s.on("data", (d) => { if (!got) answered++; got += d; });
  s.on("error", () => undefined);
  s.on("close", () => { if (!got) refused++; });
  sockets.push(s);
}
setTimeout(() => { console.log(JSON.stringify({ answered, refused })); process.exit(0); }, 8000);
`;
      const { stdout } = await sh("on", `node -e '${script.replace(/'/g, "'\\''")}'`);
      const { answered, refused } = JSON.parse(stdout) as { answered: number; refused: number };
      expect(answered).toBeLessThanOrEqual(cap);
      expect(answered).toBeGreaterThan(cap / 2);
      expect(refused).toBeGreaterThanOrEqual(40);
      expect((await audit(key)).some((entry) => entry.rule === "proxy" && /over the sandbox's \d+ connections/.test(entry.reason ?? ""))).toBe(true);
    });

    it("says in the audit trail, connection by connection, which ones the Worker handled", async () => {
      const entries = await audit(key);
      const worker = entries.filter((entry) => entry.rule === WORKER_RULE && entry.decision === "allowed");
      expect(worker).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: "http", host: "example.test", port: 80, reason: expect.stringContaining("Worker") }),
          expect.objectContaining({ kind: "https", host: "secure.test", port: 443 }),
        ]),
      );
      expect(worker.find((entry) => entry.kind === "http")!.bytesOut).toBeGreaterThan(0);
      expect(worker.find((entry) => entry.kind === "http")!.bytesIn).toBeGreaterThan(0);
    });
  });

  describe("with the internet off", () => {
    let key: string;
    beforeAll(async () => {
      key = await start("off", { http: ["example.test"], internet: false });
    }, 60_000);

    it("still hands an intercepted host to the Worker: its name resolves to the address only the Worker answers on", async () => {
      const { stdout } = await sh("off", "getent hosts example.test");
      expect(stdout.trim().split(/\s+/)[0]).toBe(PLACEHOLDER_ADDRESS);
      const answer = handled((await sh("off", "curl -sS -i -m 10 http://example.test/offline")).stdout);
      expect(answer.seen).toMatchObject({ handler: "http example.test", url: "http://example.test/offline" });
    });

    it("refuses a host nobody intercepts: its name does not resolve, and its address is refused", async () => {
      const name = await sh("off", "curl -sS -m 10 http://open.test/ ; echo rc=$?");
      expect(name.stdout + name.stderr).toMatch(/resolve/i);
      const literal = await sh("off", "curl -sS -i -m 10 -H 'Host: open.test' http://198.18.0.1/offline-literal");
      expect(literal.stdout).toMatch(/^HTTP\/1.1 403/);
      expect(literal.stdout).toMatch(/rule=internet/);
      const raw = await sh("off", `curl -sS -m 5 telnet://${PLACEHOLDER_ADDRESS}:22 </dev/null ; echo rc=$?`);
      expect(raw.stdout).not.toMatch(/rc=0/);
      expect(reached.filter((line) => line.includes("offline"))).toEqual([]);
      expect((await audit(key)).filter((entry) => entry.rule === "internet").length).toBeGreaterThan(0);
    });
  });

  describe("with every host's HTTP intercepted", () => {
    beforeAll(async () => {
      await start("all", { all: true, internet: true });
    }, 60_000);

    it("hands every host's HTTP (port 80) to the Worker, and lets HTTPS follow the network settings", async () => {
      const answer = handled((await sh("all", "curl -sS -i -m 10 http://open.test/everything")).stdout);
      expect(answer.seen).toMatchObject({ handler: "all", url: "http://open.test/everything" });
      expect(reached.filter((line) => line.includes("/everything"))).toEqual([]);
      const { stdout } = await sh("all", "curl -sS -m 10 https://secure.test/not-intercepted");
      expect(JSON.parse(stdout)).toEqual({ upstream: "https", host: "secure.test", url: "/not-intercepted" });
    });
  });

  describe("through @cloudflare/containers (outboundByHost, outbound, interceptHttps, ContainerProxy)", () => {
    const pkg = async (op: string, body?: unknown) => {
      const worker = await mf.getWorker("pkg");
      const response = await worker.fetch(`http://pkg/${op}?secret=${SECRET}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
      return { status: response.status, text: await response.text() };
    };
    const pkgSh = async (command: string) => {
      const answer = await pkg("exec", { command, timeout: 20_000 });
      expect(answer.status, answer.text).toBe(200);
      return JSON.parse(answer.text) as { stdout: string; stderr: string };
    };
    beforeAll(async () => {
      const started = await pkg("start");
      expect(started.status, started.text).toBe(200);
    }, 60_000);

    it("hands the container's HTTP to the handler for its host, everything else to the catch-all, HTTPS included", async () => {
      const byHost = handled((await pkgSh("curl -sS -i -m 10 -X POST --data-binary by-host http://example.test/pkg")).stdout);
      expect(byHost.seen).toMatchObject({ handler: "outboundByHost example.test", method: "POST", url: "http://example.test/pkg", body: "by-host", fromContainer: true });
      const catchAll = handled((await pkgSh("curl -sS -i -m 10 http://open.test/pkg-all")).stdout);
      expect(catchAll.seen).toMatchObject({ handler: "outbound", url: "http://open.test/pkg-all" });
      const secureAll = handled((await pkgSh("curl -sS -i -m 10 https://secure.test/pkg-tls")).stdout);
      expect(secureAll.seen).toMatchObject({ handler: "outbound", url: "https://secure.test/pkg-tls" });
      expect(reached.filter((line) => line.includes("/pkg"))).toEqual([]);
    });
  });

  it("was called only in ways the engine serves", () => {
    const unserved = runtime.engine.unserved.map((call) => `${call.method} ${call.path}`);
    expect(unserved, `the Docker engine did not serve: ${unserved.join(", ")}`).toEqual([]);
  });
});
