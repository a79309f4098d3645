/**
 * The container server's preview-port proxy against real servers started inside the sandbox: HTTP
 * with streamed bodies both ways, WebSocket, a raw tunnel, a port nothing listens on, the server's secret; and
 * under bwrap the sandbox's one network namespace, reached through the forwarder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import WebSocket from "ws";
import { findNetworkPrograms } from "../../container/isolation/network.ts";
import { startServer } from "../../container/server.ts";
import { freePort } from "../../runtime/ports.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { pushedBody, readUntil } from "../web-streams.ts";
import { call, eventually } from "./helpers.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

/** Starts the preview server as a background process of the sandbox; resolves with the port it listens on. */
async function startPreviewServer(sandbox: SandboxServer, host = "127.0.0.1"): Promise<number> {
  writeFileSync(join(sandbox.workspace, "preview-server.cjs"), PREVIEW_SERVER_SOURCE);
  const started = await sandbox.post("/api/process/start", { command: `exec node preview-server.cjs 0 ${host}` });
  expect(started.status).toBe(200);
  const id = started.body.process.id as string;
  let port = 0;
  const ready = await eventually(async () => {
    const logs = await sandbox.get(`/api/process/${id}/logs`);
    port = Number(/listening (\d+)/.exec(logs.body.stdout ?? "")?.[1] ?? 0);
    return port > 0;
  }, 10_000);
  expect(ready).toBe(true);
  return port;
}

const proxyUrl = (sandbox: SandboxServer, port: number, rest = "/") => `${sandbox.url}/api/ports/${port}/proxy${rest}`;

/**
 * A raw tunnel to `port` through the server (`/api/ports/{port}/tunnel`, `Upgrade: tcp`): sends
 * `payload` once it is open and answers the upgrade's status line and what came back until closed.
 */
function throughTunnel(serverUrl: string, port: number, payload: string, secret?: string): Promise<{ head: string; reply: string }> {
  const { port: serverPort } = new URL(serverUrl);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: Number(serverPort) });
    let received = "";
    let head = "";
    socket.setEncoding("latin1");
    socket.once("connect", () =>
      socket.write(`GET /api/ports/${port}/tunnel HTTP/1.1\r\nHost: c\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n${secret ? `Authorization: Bearer ${secret}\r\n` : ""}\r\n`),
    );
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (head === "" && received.includes("\r\n\r\n")) {
        head = received.slice(0, received.indexOf("\r\n"));
        received = received.slice(received.indexOf("\r\n\r\n") + 4);
        if (head.startsWith("HTTP/1.1 101")) socket.write(payload);
      }
    });
    socket.once("error", reject);
    socket.once("close", () => resolve({ head, reply: received }));
  });
}

function wsEcho(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const got: string[] = [];
    socket.on("open", () => {
      socket.send("one");
      socket.send(Buffer.from("two-binary"));
    });
    socket.on("message", (data, binary) => {
      got.push(binary ? `binary:${data.toString()}` : data.toString());
      if (got.length === 2) socket.close();
    });
    socket.on("close", () => resolve(got));
    socket.on("error", reject);
    socket.on("unexpected-response", (_req, res) => reject(new Error(`status ${res.statusCode}`)));
  });
}

describe("the port proxy without isolation", () => {
  let sandbox: SandboxServer;
  let port: number;

  beforeAll(async () => {
    sandbox = await startSandbox();
    port = await startPreviewServer(sandbox);
  });
  afterAll(() => sandbox.close());

  it("forwards a GET with its path and query, as localhost:<port>, and brings back the headers", async () => {
    const response = await fetch(proxyUrl(sandbox, port, "/info?x=1&y=two"), { headers: { "x-forwarded-prefix": "/v1/sandboxes/s/ports/1", "x-custom": "yes" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toBe("app=1; Path=/");
    const seen = (await response.json()) as { method: string; path: string; query: string; headers: Record<string, string> };
    expect(seen).toMatchObject({ method: "GET", path: "/info", query: "?x=1&y=two" });
    expect(seen.headers).toMatchObject({ host: `localhost:${port}`, "x-forwarded-prefix": "/v1/sandboxes/s/ports/1", "x-custom": "yes" });
  });

  it("reaches a server that listens on ::1 only (a dev server told to listen on localhost)", async () => {
    const v6 = await startPreviewServer(sandbox, "::1");
    const response = await fetch(proxyUrl(sandbox, v6, "/info?family=6"));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ query: "?family=6" });
  });

  it("gives the app the caller's own Authorization, never the hop's", async () => {
    const response = await fetch(proxyUrl(sandbox, port, "/info"), { headers: { authorization: "Bearer hop-secret", "x-sandbox-port-authorization": "Basic YXBwOnVzZXI=" } });
    const seen = (await response.json()) as { headers: Record<string, string> };
    expect(seen.headers.authorization).toBe("Basic YXBwOnVzZXI=");
    expect(JSON.stringify(seen.headers)).not.toContain("hop-secret");
  });

  it("streams a request body to the port and its answer back, chunk by chunk", async () => {
    const upload = pushedBody();
    upload.push("first-chunk;");
    const response = await fetch(proxyUrl(sandbox, port, "/echo"), { method: "POST", body: upload.body, duplex: "half" } as RequestInit);
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    // The first chunk comes back while the request is still open: both directions stream.
    const first = await readUntil(reader, "first-chunk;");
    expect(first).toBe("first-chunk;");
    upload.push("second-chunk");
    upload.end();
    expect(await readUntil(reader, "second-chunk", first)).toBe("first-chunk;second-chunk");
  });

  it("hands on a streamed answer before it ends", async () => {
    const response = await fetch(proxyUrl(sandbox, port, "/drip?n=3&ms=300"));
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe("drip-1\n");
    expect(await readUntil(reader, "drip-3", first)).toBe("drip-1\ndrip-2\ndrip-3\n");
  });

  it("passes a WebSocket through both ways", async () => {
    expect(await wsEcho(proxyUrl(sandbox, port, "/socket").replace("http:", "ws:"))).toEqual(["echo:one", "binary:two-binary"]);
  });

  it("opens a raw tunnel to the port (what the local sidecar carries getTcpPort through): the port's own bytes both ways", async () => {
    const tunnel = await throughTunnel(sandbox.url, port, "GET /info?raw=1 HTTP/1.1\r\nHost: inner\r\nConnection: close\r\n\r\n");
    expect(tunnel.head).toBe("HTTP/1.1 101 Switching Protocols");
    expect(tunnel.reply).toMatch(/^HTTP\/1\.1 200 /);
    // Nothing is rewritten on the way: the port sees the Host its caller wrote.
    expect(tunnel.reply).toContain('"host":"inner"');
    expect(tunnel.reply).toContain('"query":"?raw=1"');
  });

  it("answers a port nothing listens on with PORT_NOT_LISTENING, for HTTP and upgrades alike", async () => {
    const idle = await freePort();
    expect((await throughTunnel(sandbox.url, idle, "")).head).toMatch(/^HTTP\/1\.1 502 PORT_NOT_LISTENING/);
    const reply = await call(sandbox.url, "GET", `/api/ports/${idle}/proxy/`);
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ code: "PORT_NOT_LISTENING", context: { port: idle } });
    await expect(wsEcho(proxyUrl(sandbox, idle).replace("http:", "ws:"))).rejects.toThrow("status 502");
  });
});

describe("the port proxy behind the server's secret", () => {
  it("refuses requests and upgrades without the secret, before connecting anywhere", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "sandbox-ws-"));
    const server = await startServer({ port: 0, host: "127.0.0.1", workspace, secret: "s3cret" });
    try {
      const refused = await fetch(`${server.url}/api/ports/8080/proxy/`);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: "UNAUTHORIZED" });
      await expect(wsEcho(`${server.url.replace("http:", "ws:")}/api/ports/8080/proxy/`)).rejects.toThrow("status 401");
      expect((await throughTunnel(server.url, 8080, "")).head).toMatch(/^HTTP\/1\.1 401 /);
      expect((await throughTunnel(server.url, await freePort(), "", "s3cret")).head).toMatch(/^HTTP\/1\.1 502 /);
      const allowed = await fetch(`${server.url}/api/ports/${await freePort()}/proxy/`, { headers: { authorization: "Bearer s3cret" } });
      expect(await allowed.json()).toMatchObject({ code: "PORT_NOT_LISTENING" });
    } finally {
      await server.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

const unavailable = bwrapUnavailableReason();
const slirpMissing = "missing" in findNetworkPrograms();

/** Pids of forwarders listening on a socket under `dir` (from their command lines). */
function forwardersUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.includes("forwarder.cjs") && cmdline.includes(dir)) pids.push(Number(name));
    } catch {
      // gone while we looked
    }
  }
  return pids;
}

describe.skipIf(unavailable !== undefined)("the port proxy under bwrap", () => {
  for (const allowNetwork of slirpMissing ? [false] : [false, true]) {
    describe(allowNetwork ? "with network allowed" : "without network", () => {
      let sandbox: SandboxServer;
      let stateDir: string;
      let port: number;

      beforeAll(async () => {
        stateDir = mkdtempSync(join(tmpdir(), "sandbox-state-test-"));
        sandbox = await startSandbox({ isolation: "bwrap", allowNetwork, stateDir });
        port = await startPreviewServer(sandbox);
      });
      afterAll(async () => {
        await sandbox.close();
        rmSync(stateDir, { recursive: true, force: true });
      });

      it("reaches a server one command started, from the proxy outside the sandbox's network", async () => {
        const response = await fetch(proxyUrl(sandbox, port, "/info?under=bwrap"));
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ path: "/info", query: "?under=bwrap" });
        expect(await wsEcho(proxyUrl(sandbox, port, "/").replace("http:", "ws:"))).toEqual(["echo:one", "binary:two-binary"]);
      });

      it("reaches a server inside that listens on ::1 only", async () => {
        const v6 = await startPreviewServer(sandbox, "::1");
        const response = await fetch(proxyUrl(sandbox, v6, "/info?family=6"));
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ query: "?family=6" });
      });

      it("lets a second command reach the first one's server over the sandbox's loopback", async () => {
        const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET /info?from=second HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
        const reply = await sandbox.exec({ command });
        expect(reply.body.exitCode).toBe(0);
        expect(reply.body.stdout).toContain('"query":"?from=second"');
      });

      it("does not put the sandbox's servers on the host's loopback", async () => {
        const onHost = await fetch(`http://127.0.0.1:${port}/info`).then((r) => r.text(), () => "refused");
        expect(onHost).not.toContain('"path":"/info"');
      });

      it("answers a port nothing listens on inside the sandbox with PORT_NOT_LISTENING", async () => {
        const idle = port === 65535 ? port - 1 : port + 1;
        const reply = await call(sandbox.url, "GET", `/api/ports/${idle}/proxy/`);
        expect(reply.status).toBe(502);
        expect(reply.body).toMatchObject({ code: "PORT_NOT_LISTENING" });
      });

      it("stops the forwarder with the server", async () => {
        expect(forwardersUnder(stateDir).length).toBe(1);
        const other = await startSandbox({ isolation: "bwrap", allowNetwork, stateDir: mkdtempSync(join(tmpdir(), "sandbox-state-test-")) });
        const otherPort = await startPreviewServer(other);
        await fetch(proxyUrl(other, otherPort, "/info"));
        const dir = (other.server.context.services.isolation as unknown as { runsDir: { host: string } }).runsDir.host.replace(/\/runs$/, "");
        expect(forwardersUnder(dir).length).toBe(1);
        await other.close();
        expect(await eventually(() => forwardersUnder(dir).length === 0, 5000)).toBe(true);
        rmSync(dir, { recursive: true, force: true });
      });
    });
  }
});
