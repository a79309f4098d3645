/**
 * The runtime's Docker engine (runtime/docker-engine/) driven as workerd drives it, over its unix
 * socket: a sidecar and its container created, started, inspected; the container's server reached
 * through the sidecar's CONNECT ingress; signalled, waited on, removed. And its walls: the socket is
 * its user's alone, the sidecar's control on its loopback port serves no other user (one tries to
 * redirect the container's egress) and its tunnel leads them only to a server that wants its secret,
 * a create without the server's secret is refused, and a call the engine does not serve answers a
 * coded error naming it.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_SERVER_SECRET_VAR, ENGINE_START_VAR, type RuntimeContainerInfo } from "../../protocol/runtime.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { engineCall, throughSidecar } from "./docker-engine-client.ts";
import { tempDataDir, type DataDir } from "./helpers.ts";

const NAME = "workerd-sandbox-test-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const SECRET = "engine-test-secret-0123456789";
/** A user of the machine who is not the runtime's. */
const OTHER_UID = 65534;
const root = process.getuid?.() === 0;

let dataDir: DataDir;
let runtime: RunningRuntime;
const isolation = detectIsolation().bwrap.available ? "bwrap" : "none";
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation, stopGraceMs: 2_000 });
});
afterAll(async () => {
  await runtime?.close();
  dataDir.remove();
});

const engine = (method: string, path: string, body?: unknown) => engineCall(runtime.engine.path, method, path, body);

/**
 * Runs a small node program as another user (or as the runtime's); answers what it printed. Not
 * spawnSync: the runtime it talks to runs in this process and must go on serving meanwhile.
 */
async function asOtherUser(program: string, uid: number | "self" = OTHER_UID): Promise<string> {
  const child = spawn(process.execPath, ["-e", program], { ...(uid === "self" ? {} : { uid, gid: uid }), cwd: "/", timeout: 10_000 });
  let said = "";
  child.stdout.on("data", (chunk: Buffer) => (said += chunk));
  child.stderr.on("data", (chunk: Buffer) => (said += chunk));
  await once(child, "close");
  return said.trim();
}
const asSelf = (program: string) => asOtherUser(program, "self");

/** A program that sends `raw` to a loopback port and prints `answer:<what came back>` once the connection closes. */
function rawExchange(port: number, raw: string): string {
  return `const s = require("node:net").connect(${port}, "127.0.0.1", () => s.write(${JSON.stringify(raw)})); let got = ""; s.on("data", (d) => (got += d)); s.on("error", () => {}); s.on("close", () => console.log("answer:" + JSON.stringify(got)))`;
}

async function startSidecar(name: string): Promise<number> {
  expect((await engine("POST", `/containers/create?name=${name}-proxy`, { Image: "cloudflare/proxy-everything:test", Cmd: ["--http-ingress-address", "0.0.0.0:39001"], ExposedPorts: { "39001/tcp": {} } })).status).toBe(201);
  expect((await engine("POST", `/containers/${name}-proxy/start`)).status).toBe(204);
  const inspected = await engine("GET", `/containers/${name}-proxy/json`);
  expect(inspected.status).toBe(200);
  const hostPort = inspected.body.NetworkSettings.Ports["39001/tcp"][0].HostPort;
  expect(typeof hostPort).toBe("string");
  return Number(hostPort);
}

describe("the runtime's Docker engine", () => {
  it("answers /_ping, /version and the bridge network workerd reads, versioned paths too", async () => {
    expect(await engine("GET", "/_ping")).toMatchObject({ status: 200, text: "OK" });
    expect((await engine("GET", "/v1.43/version")).body).toMatchObject({ ApiVersion: expect.any(String), Os: "linux" });
    expect((await engine("GET", "/networks/bridge")).body).toMatchObject({ Name: "bridge", IPAM: { Config: [{ Subnet: "10.0.2.0/24", Gateway: "127.0.0.1" }] } });
    expect((await engine("GET", '/volumes?filters={"name":["workerd-snap-"]}')).body).toEqual({ Volumes: [], Warnings: [] });
    expect((await engine("GET", `/containers/${NAME}/json`)).status).toBe(404);
  });

  it("runs a container beside its sidecar: start, a tunnel to its server, signal, wait, remove", async () => {
    const sidecarPort = await startSidecar(NAME);
    expect((await engine("PUT", "/egress", {})).status).toBe(501); // the engine's socket is no sidecar
    const control = await fetch(`http://127.0.0.1:${sidecarPort}/egress`, { method: "PUT", body: JSON.stringify({ port: 1234, dns: { allowHostnames: [] }, internet: { enabled: true } }) });
    expect(control.status).toBe(200);
    const ca = await fetch(`http://127.0.0.1:${sidecarPort}/ca`);
    expect(await ca.text()).toContain("BEGIN CERTIFICATE");

    const created = await engine("POST", `/containers/create?name=${NAME}`, {
      Image: "cloudflare-dev/sandbox:test",
      Cmd: [],
      Env: ["GREETING=hi", `${ENGINE_SERVER_SECRET_VAR}=${SECRET}`, "CLOUDFLARE_REGION=REGN"],
      StopTimeout: 10,
      HostConfig: { NetworkMode: `container:${NAME}-proxy`, RestartPolicy: { Name: "on-failure" }, Memory: 0 },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.Id).toMatch(/^[0-9a-f]{64}$/);
    expect((await engine("POST", `/containers/create?name=${NAME}`, { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`] })).status).toBe(409);
    const started = await engine("POST", `/containers/${NAME}/start`);
    expect(started.status, started.text).toBe(204);
    expect((await engine("POST", `/containers/${NAME}/start`)).status).toBe(304);
    expect((await engine("GET", `/containers/${NAME}/json`)).body).toMatchObject({ State: { Status: "running", Running: true }, Config: { Image: "cloudflare-dev/sandbox:test" } });

    // The server answers through the tunnel, to its secret only; the secret is no env var of the container's.
    const body = JSON.stringify({ command: 'echo "$GREETING ${SANDBOX_ENGINE_SERVER_SECRET:-unset}"' });
    const request = (secret?: string) =>
      `POST /api/execute HTTP/1.1\r\nHost: container\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${secret ? `Authorization: Bearer ${secret}\r\n` : ""}\r\n${body}`;
    const through = await throughSidecar(sidecarPort, 3000, request(SECRET));
    expect(through.connectStatus).toBe(200);
    expect(through.reply).toMatch(/^HTTP\/1\.1 200/);
    expect(through.reply).toContain("hi unset");
    expect((await throughSidecar(sidecarPort, 3000, request())).reply).toMatch(/^HTTP\/1\.1 401/);
    // A port nothing of the container's listens on is 400, as workerd reads it.
    expect((await throughSidecar(sidecarPort, 8080, request(SECRET))).connectStatus).toBe(400);
    // Once a server of the sandbox's listens there, the tunnel reaches it inside the sandbox's network (getTcpPort(8080)).
    const serve = JSON.stringify({ command: `node -e 'require("node:http").createServer((q, r) => r.end("port 8080 says " + q.url)).listen(8080, "127.0.0.1")'` });
    const started8080 = await throughSidecar(sidecarPort, 3000, `POST /api/process/start HTTP/1.1\r\nHost: c\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(serve)}\r\nConnection: close\r\nAuthorization: Bearer ${SECRET}\r\n\r\n${serve}`);
    expect(started8080.reply).toMatch(/^HTTP\/1\.1 200/);
    const viaPort = async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const reply = await throughSidecar(sidecarPort, 8080, "GET /hello HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n");
        if (reply.connectStatus === 200) return reply;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error("port 8080 never answered through the sidecar");
    };
    const fromPort = await viaPort();
    expect(fromPort.reply).toMatch(/^HTTP\/1\.1 200/);
    expect(fromPort.reply).toContain("port 8080 says /hello");

    // workerd's monitor: a wait held until the container ends, here by SIGTERM.
    const waiting = engine("POST", `/containers/${NAME}/wait`);
    expect((await engine("POST", `/containers/${NAME}/kill?signal=SIGTERM`)).status).toBe(204);
    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(typeof waited.body.StatusCode).toBe("number");
    expect((await engine("GET", `/containers/${NAME}/json`)).body.State).toMatchObject({ Running: false, Status: "exited" });
    expect((await engine("POST", `/containers/${NAME}/kill?signal=SIGTERM`)).status).toBe(409);
    expect((await throughSidecar(sidecarPort, 3000, request(SECRET))).connectStatus).toBe(400);

    // Started again (workerd's start after a stop), then destroyed as workerd does: force remove, wait for removal.
    expect((await engine("POST", `/containers/${NAME}/start`)).status).toBe(204);
    expect((await throughSidecar(sidecarPort, 3000, request(SECRET))).reply).toContain("hi unset");
    const removed = engine("POST", `/containers/${NAME}/wait?condition=removed`);
    expect((await engine("DELETE", `/containers/${NAME}?force=true`)).status).toBe(204);
    expect((await removed).status).toBe(200);
    expect((await engine("GET", `/containers/${NAME}/json`)).status).toBe(404);
    expect((await engine("DELETE", `/containers/${NAME}?force=true`)).status).toBe(404);
    // The sidecar stops on a signal (its wait ends), and is gone once removed.
    const sidecarWait = engine("POST", `/containers/${NAME}-proxy/wait`);
    expect((await engine("POST", `/containers/${NAME}-proxy/kill?signal=SIGKILL`)).status).toBe(204);
    expect((await sidecarWait).body).toMatchObject({ StatusCode: 0 });
    await expect(fetch(`http://127.0.0.1:${sidecarPort}/ca`)).rejects.toThrow();
    expect((await engine("DELETE", `/containers/${NAME}-proxy?force=true`)).status).toBe(204);
  });

  it("refuses a container without its server's secret, and a bad signal", async () => {
    const refused = await engine("POST", "/containers/create?name=no-secret", { Image: "x", Env: ["A=b"] });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(ENGINE_SERVER_SECRET_VAR);
    expect((await engine("POST", "/containers/create?name=signals", { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=s`] })).status).toBe(201);
    expect((await engine("POST", "/containers/signals/kill?signal=SIGNOPE")).status).toBe(400);
    expect((await engine("DELETE", "/containers/signals?force=true")).status).toBe(204);
  });

  it("applies a sandbox's network policy and isolation handed over at create, within the operator's walls", async () => {
    const name = "workerd-policy-00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const policy = { default: "deny", rules: [], inject: [] };
    const settings = JSON.stringify({ egress: { policy, secrets: {} } });
    expect((await engine("POST", `/containers/create?name=${name}`, { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`, `${ENGINE_START_VAR}=${settings}`] })).status).toBe(201);
    expect(runtime.engine.engine.get(name).env).not.toHaveProperty(ENGINE_START_VAR);
    expect((await engine("POST", `/containers/${name}/start`)).status).toBe(204);
    expect(runtime.pool.containerSettings.egress.of(name.slice(-64)).policy).toEqual(policy);
    expect((await engine("DELETE", `/containers/${name}?force=true`)).status).toBe(204);

    const malformed = await engine("POST", "/containers/create?name=bad-settings", { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=s`, `${ENGINE_START_VAR}={"egress":1}`] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toContain(ENGINE_START_VAR);
    if (runtime.isolation === "bwrap") {
      const below = await engine("POST", "/containers/create?name=below-floor", { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=s`, `${ENGINE_START_VAR}={"isolation":{"isolation":"none"}}`] });
      expect(below.status).toBe(403);
      expect(below.body.message).toContain("ISOLATION_NOT_ALLOWED");
    }
  });

  it("runs a container under the sandbox key its create names, which the runtime's API addresses, and keeps why a start was refused", async () => {
    const name = `workerd-keyed-${"ab".repeat(32)}`;
    const key = "named-sandbox";
    const settings = JSON.stringify({ key });
    const create = (container: string, startSettings: string) =>
      engine("POST", `/containers/create?name=${container}`, { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`, `${ENGINE_START_VAR}=${startSettings}`] });
    const runtimeState = async (sandboxKey: string) =>
      (await fetch(`${runtime.url}/containers/${sandboxKey}`, { headers: { authorization: `Bearer ${runtime.secret}` } })).json() as Promise<RuntimeContainerInfo>;
    expect((await create(name, settings)).status).toBe(201);
    expect((await engine("POST", `/containers/${name}/start`)).status).toBe(204);
    expect(await runtimeState(key)).toMatchObject({ key, running: true });
    expect(existsSync(join(runtime.dataDir, key))).toBe(true);
    // Another container asking for the same sandbox while it runs would share its folder and pool slot.
    const twin = await create(`workerd-twin-${"cd".repeat(32)}`, settings);
    expect(twin.status).toBe(409);
    expect(twin.body.message).toContain(key);
    expect((await engine("DELETE", `/containers/${name}?force=true`)).status).toBe(204);
    expect((await create(`workerd-bad-key-${"ef".repeat(32)}`, JSON.stringify({ key: "../up" }))).status).toBe(400);
    if (runtime.isolation === "bwrap") {
      const refused = await create(`workerd-refused-${"01".repeat(32)}`, JSON.stringify({ key: "refused-sandbox", isolation: { isolation: "none" } }));
      expect(refused.status).toBe(403);
      expect(await runtimeState("refused-sandbox")).toMatchObject({ running: false, startRefusal: { code: "ISOLATION_NOT_ALLOWED" } });
    }
  });

  it("answers a call it does not serve with a coded error naming it, and keeps it", async () => {
    const reply = await engine("POST", "/v1.43/images/create?fromImage=alpine");
    expect(reply.status).toBe(501);
    expect(reply.body).toEqual({ message: "the local runtime's Docker engine does not serve POST /images/create", code: "ENGINE_CALL_NOT_SERVED" });
    expect(runtime.engine.unserved).toContainEqual({ method: "POST", path: "/images/create" });
  });

  describe.skipIf(!root)("walls against other users of the machine", () => {
    it("keeps its socket in a folder only the runtime's user may enter", async () => {
      expect(statSync(runtime.engine.path).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(runtime.engine.path)).mode & 0o777).toBe(0o700);
      const said = await asOtherUser(`require("node:http").get({ socketPath: ${JSON.stringify(runtime.engine.path)}, path: "/_ping" }, (r) => console.log("status", r.statusCode)).on("error", (e) => console.log(e.code))`);
      expect(said).toBe("EACCES");
    });

    it("serves a sidecar's control to the runtime's user only, its tunnel to anyone only to a server that wants its secret, and to the sandbox's other ports only to the runtime's user", async () => {
      const name = "workerd-walls-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
      const sidecarPort = await startSidecar(name);
      expect((await engine("POST", `/containers/create?name=${name}`, { Image: "x", Env: [`${ENGINE_SERVER_SECRET_VAR}=${SECRET}`] })).status).toBe(201);
      expect((await engine("POST", `/containers/${name}/start`)).status).toBe(204);
      const sidecar = runtime.engine.engine.get(`${name}-proxy`).proxy!;
      const before = sidecar.refused;
      // Another user points the container's egress at a listener of their own, and reads its authority.
      const body = '{"port":4444,"internet":{"enabled":true}}';
      const redirect = await asOtherUser(rawExchange(sidecarPort, `PUT /egress HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
      expect(redirect).toMatch(/^answer:"HTTP\/1\.1 403 /);
      expect(sidecar.refused).toBe(before + 1);
      expect(sidecar.egress?.port).not.toBe(4444);
      // The authority's certificate is public (every container of the sandbox holds it): served to anyone.
      expect(await asOtherUser(rawExchange(sidecarPort, "GET /ca HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))).toContain("BEGIN CERTIFICATE");
      // Their tunnel reaches the container's server, which answers them as its own port does: not without its secret.
      const tunnel = await asOtherUser(
        rawExchange(sidecarPort, "CONNECT 127.0.0.1:3000 HTTP/1.1\r\nX-Dst-Addr: 127.0.0.1:3000\r\n\r\nGET /api/info HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n"),
      );
      expect(tunnel).toMatch(/^answer:"HTTP\/1\.1 200 Connection Established\\r\\n\\r\\nHTTP\/1\.1 401 /);
      // A tunnel to another port of the sandbox would carry the server's secret for them: refused, as a port nothing listens on.
      const serve = JSON.stringify({ command: `node -e 'require("node:http").createServer((q, r) => r.end("inner")).listen(8080, "127.0.0.1")'` });
      const startServe = `POST /api/process/start HTTP/1.1\r\nHost: c\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(serve)}\r\nConnection: close\r\nAuthorization: Bearer ${SECRET}\r\n\r\n${serve}`;
      expect((await throughSidecar(sidecarPort, 3000, startServe)).reply).toMatch(/^HTTP\/1\.1 200/);
      const inner = "CONNECT 127.0.0.1:8080 HTTP/1.1\r\nX-Dst-Addr: 127.0.0.1:8080\r\n\r\nGET / HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n";
      let ours = "";
      for (let attempt = 0; attempt < 100 && !ours.includes("inner"); attempt++) {
        ours = await asSelf(rawExchange(sidecarPort, inner));
        if (!ours.includes("inner")) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ours).toMatch(/^answer:"HTTP\/1\.1 200 Connection Established\\r\\n\\r\\nHTTP\/1\.1 200 /);
      expect(ours).toContain("inner");
      const theirs = await asOtherUser(rawExchange(sidecarPort, inner));
      expect(theirs).toMatch(/^answer:"HTTP\/1\.1 400 /);
      expect(theirs).not.toContain("inner");
      expect(sidecar.refused).toBe(before + 2);
      expect((await engine("DELETE", `/containers/${name}?force=true`)).status).toBe(204);
      expect((await engine("DELETE", `/containers/${name}-proxy?force=true`)).status).toBe(204);
    });
  });
});
