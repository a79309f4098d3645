/**
 * The runtime's Docker engine as workerd calls it (runtime/docker-engine/), each figure beside the
 * runtime's own API doing the same in the same run:
 *  - the engine's answer to workerd's small calls (inspect, the bridge network, the sidecar's
 *    PUT /egress), median, beside the runtime API's GET /health;
 *  - a container started through the engine (create + start, as workerd does) beside one started
 *    through the runtime API (today's stand-in `ctx.container`);
 *  - an exec round trip through the sidecar's CONNECT tunnel (workerd's getTcpPort) beside one
 *    sent straight to the container server's port;
 *  - a request to another port of the sandbox through that tunnel (getTcpPort(8080)) beside one
 *    through the container server's HTTP proxy to the port.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINE_SERVER_SECRET_VAR } from "../protocol/runtime.ts";
import { startRuntime } from "../runtime/server.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { median, nowMs } from "./support.ts";
import type { BenchModule } from "./types.ts";

const CALLS = 200;
const STARTS = 5;
const EXECS = 100;
const SECRET = "bench-engine-secret-0123456789";
/** A port of the sandbox's own, other than its container server's. */
const OTHER_PORT = 8080;

function engineCall(socketPath: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ socketPath, method, path, headers: { host: "localhost", ...(text ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) } : {}) } }, (res) => {
      let data = "";
      res.on("data", (chunk: Buffer) => (data += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: data }));
    });
    req.on("error", reject);
    req.end(text);
  });
}

function httpCall(port: number, method: string, path: string, body: string | undefined, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, agent: false, headers: { ...headers, ...(body ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {}) } }, (res) => {
      let data = "";
      res.on("data", (chunk: Buffer) => (data += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: data }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** One exec through the sidecar's tunnel, as workerd's getTcpPort opens one per request. */
function tunnelExec(sidecarPort: number, body: string): Promise<string> {
  return throughTunnel(sidecarPort, 3000, `POST /api/execute HTTP/1.1\r\nHost: c\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** `payload` through a CONNECT tunnel of the sidecar to `port` of its container; what came back once it closed. */
function throughTunnel(sidecarPort: number, port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: sidecarPort });
    let received = "";
    let open = false;
    socket.once("connect", () => socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nX-Dst-Addr: 127.0.0.1:${port}\r\n\r\n`));
    socket.on("data", (chunk: Buffer) => {
      received += chunk;
      if (!open && received.includes("\r\n\r\n")) {
        open = true;
        if (!received.startsWith("HTTP/1.1 200")) return void socket.destroy(new Error(`CONNECT to ${port}: ${received.split("\r\n")[0]}`));
        received = "";
        socket.write(payload);
      }
    });
    socket.once("error", reject);
    socket.once("close", () => resolve(received));
  });
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = nowMs();
  await work();
  return nowMs() - t0;
}

const millis = (value: number) => `${value.toFixed(2)} ms`;

const bench: BenchModule = {
  name: "docker-engine",
  async run() {
    const dir = mkdtempSync(join(tmpdir(), "bench-engine-"));
    chmodSync(dir, 0o711);
    const runtime = await startRuntime({ dataDir: dir, isolation: detectIsolation().bwrap.available ? "bwrap" : "none", stopGraceMs: 1_000 });
    const sock = runtime.engine.path;
    const auth = { authorization: `Bearer ${runtime.secret}` };
    try {
      const name = "workerd-bench-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
      await engineCall(sock, "POST", `/containers/create?name=${name}-proxy`, { Image: "egress" });
      await engineCall(sock, "POST", `/containers/${name}-proxy/start`);
      const sidecarPort = Number(JSON.parse((await engineCall(sock, "GET", `/containers/${name}-proxy/json`)).text).NetworkSettings.Ports["39001/tcp"][0].HostPort);

      const inspect: number[] = [];
      const bridge: number[] = [];
      const egress: number[] = [];
      const health: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        inspect.push(await timed(() => engineCall(sock, "GET", `/containers/${name}-proxy/json`)));
        bridge.push(await timed(() => engineCall(sock, "GET", "/networks/bridge")));
        egress.push(await timed(() => httpCall(sidecarPort, "PUT", "/egress", JSON.stringify({ port: 1, internet: { enabled: false } }))));
        health.push(await timed(() => httpCall(runtime.port, "GET", "/health", undefined, auth)));
      }

      const viaEngine: number[] = [];
      const viaApi: number[] = [];
      for (let i = 0; i < STARTS; i++) {
        viaEngine.push(
          await timed(async () => {
            await engineCall(sock, "POST", `/containers/create?name=${name}`, { Image: "sandbox", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`] });
            const started = await engineCall(sock, "POST", `/containers/${name}/start`);
            if (started.status !== 204) throw new Error(`engine start: ${started.status} ${started.text}`);
          }),
        );
        await engineCall(sock, "DELETE", `/containers/${name}?force=true`);
        viaApi.push(
          await timed(async () => {
            const started = await httpCall(runtime.port, "POST", "/containers/bench-api/start", "{}", auth);
            if (started.status !== 200) throw new Error(`runtime start: ${started.status} ${started.text}`);
          }),
        );
        await httpCall(runtime.port, "DELETE", "/containers/bench-api", undefined, auth);
      }

      await engineCall(sock, "POST", `/containers/create?name=${name}`, { Image: "sandbox", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`] });
      await engineCall(sock, "POST", `/containers/${name}/start`);
      const serverPort = runtime.engine.engine.get(name).run!.port;
      const body = JSON.stringify({ command: "true" });
      const tunnel: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < EXECS; i++) {
        tunnel.push(await timed(() => tunnelExec(sidecarPort, body)));
        direct.push(await timed(() => httpCall(serverPort, "POST", "/api/execute", body, { authorization: `Bearer ${SECRET}` })));
      }

      // A server of the sandbox's own on another port: reached through the sidecar (getTcpPort(8080)), beside the container server's HTTP proxy to it.
      const serve = JSON.stringify({ command: `node -e 'require("node:http").createServer((q, r) => r.end("ok")).listen(${OTHER_PORT}, "127.0.0.1")'` });
      await httpCall(serverPort, "POST", "/api/process/start", serve, { authorization: `Bearer ${SECRET}` });
      const otherRequest = "GET / HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n";
      for (let attempt = 0; !(await throughTunnel(sidecarPort, OTHER_PORT, otherRequest).catch(() => "")).endsWith("ok"); attempt++) {
        if (attempt > 100) throw new Error(`nothing answered on port ${OTHER_PORT}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const otherTunnel: number[] = [];
      const otherProxy: number[] = [];
      for (let i = 0; i < EXECS; i++) {
        otherTunnel.push(await timed(() => throughTunnel(sidecarPort, OTHER_PORT, otherRequest)));
        otherProxy.push(await timed(() => httpCall(serverPort, "GET", `/api/ports/${OTHER_PORT}/proxy/`, undefined, { authorization: `Bearer ${SECRET}` })));
      }

      const small = median([...inspect, ...bridge]);
      return [
        {
          title: "Docker engine: workerd's calls, a container's start and exec through the sidecar",
          baselineLabel: "the runtime's own API / the container server's port, same run",
          rows: [
            { metric: `engine answer to workerd's calls (inspect, /networks/bridge), median of ${CALLS * 2}`, ours: millis(small), baseline: millis(median(health)), target: "≤ baseline + 1 ms", met: small <= median(health) + 1 },
            { metric: `sidecar PUT /egress (workerd's readiness probe, once per start), median of ${CALLS}`, ours: millis(median(egress)), baseline: millis(median(health)), target: "≤ 50 ms (its caller's uid read from the kernel's socket table)", met: median(egress) <= 50 },
            { metric: `container start (create + start through the engine), median of ${STARTS}`, ours: millis(median(viaEngine)), baseline: millis(median(viaApi)), target: "≤ baseline × 1.1", met: median(viaEngine) <= median(viaApi) * 1.1 },
            { metric: `exec round trip through the sidecar's tunnel (a connection each), median of ${EXECS}`, ours: millis(median(tunnel)), baseline: millis(median(direct)), target: "≤ baseline + 3 ms", met: median(tunnel) <= median(direct) + 3 },
            {
              metric: `a request to another port of the sandbox (${OTHER_PORT}) through the sidecar's tunnel (getTcpPort: its caller's uid read, then the server's raw tunnel), median of ${EXECS}`,
              ours: millis(median(otherTunnel)),
              baseline: `${millis(median(otherProxy))} (the container server's HTTP proxy to the port, preview URLs' way)`,
            },
          ],
          notes: [`inspect ${millis(median(inspect))}, /networks/bridge ${millis(median(bridge))}; starts without a warm pool (SANDBOX_WARM_POOL=0)`],
        },
      ];
    } finally {
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
