/**
 * A preview URL's life, through the Worker, the Durable Object and a real server in the sandbox:
 * custom tokens (checked, stable, rotated), a URL gone stale when its container stops (410
 * STALE_PREVIEW_URL until the port is exposed again, and never a container started by it), and
 * destroy revoking every token (404, nothing started). An old URL is hammered the way a hostile page
 * would — navigations, programs, WebSockets, with and without credentials — and must start nothing.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { eventually, runtimeFetch, runtimeState, sandboxPool } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const ORIGIN = "http://sandbox.test";
const bearer = { authorization: `Bearer ${env.SANDBOX_API_TOKEN}` };

const pool = sandboxPool();
afterAll(pool.destroyAll);

/** Starts the preview server inside the sandbox on `port` (any free one for 0); resolves with the port. */
async function startPreviewServer(sandbox: SandboxClient, port = 0): Promise<number> {
  await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
  const process = await sandbox.startProcess(`exec node preview-server.cjs ${port}`);
  const { match } = await process.waitForLog(/listening (\d+)/, 15_000);
  return Number((match as RegExpMatchArray)[1]);
}

function visit(url: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(new URL(url, ORIGIN), { redirect: "manual", ...init }));
}

/** `/info` of the port's URL, its token kept. */
function infoOf(url: string): string {
  return url.replace("/?token=", "/info?token=");
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

/** Kills the sandbox's container at the runtime, as a crash would, and waits until it is gone. */
async function crash(sandbox: SandboxClient): Promise<void> {
  await runtimeFetch(`/containers/${sandbox.id}`, { method: "DELETE" });
  expect(await eventually(async () => !(await runtimeState(sandbox.id)).running, 15_000, 100)).toBe(true);
}

/**
 * Every way a page or a program may come at an old URL: a program's request, a navigation, a
 * WebSocket, the API token, the cookie, a POST. Resolves with each answer's status and code.
 */
async function hammer(url: string): Promise<{ status: number; code: string }[]> {
  const token = new URL(url).searchParams.get("token") ?? "";
  const plain = url.replace(/\?token=.*$/, "");
  const attempts: [string, RequestInit][] = [
    [infoOf(url), {}],
    [infoOf(url), { headers: { "sec-fetch-mode": "navigate" } }],
    [url.replace("/?token=", "/socket?token="), { headers: { upgrade: "websocket" } }],
    [`${plain}info`, { headers: bearer }],
    [`${plain}info`, { headers: { cookie: `sandbox_port_token=${token}` } }],
    [url.replace("/?token=", "/echo?token="), { method: "POST", body: "x" }],
  ];
  const answers = [];
  for (const [target, init] of attempts) {
    const response = await visit(target, init);
    answers.push({ status: response.status, code: await errorCode(response) });
  }
  return answers;
}

describe("custom preview tokens", () => {
  it("refuses a token Cloudflare's SDK would refuse, coded, without starting a container (RPC and /v1)", async () => {
    const sandbox = pool.create("token-rules");
    for (const token of ["", "UPPER", "with-dash", "dot.ted", "x".repeat(17), " pad", 42]) {
      const error = await sandbox.exposePort(8080, { token: token as string, origin: ORIGIN }).catch((e: unknown) => e);
      expect(error, JSON.stringify(token)).toMatchObject({ code: "INVALID_REQUEST", httpStatus: 400 });
      expect((error as Error).message, JSON.stringify(token)).toMatch(/token/);
    }
    const overHttp = await visit(`${ORIGIN}/v1/sandboxes/${sandbox.id}/ports`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ port: 8080, token: "Bad-Token" }),
    });
    expect(overHttp.status).toBe(400);
    expect(await errorCode(overHttp)).toBe("INVALID_REQUEST");
    expect((await runtimeState(sandbox.id)).running).toBe(false);
    // The longest and the shortest a token may be.
    expect((await sandbox.exposePort(8080, { token: "a_1".padEnd(16, "z"), origin: ORIGIN })).url).toMatch(/\?token=a_1z{13}$/);
    expect((await sandbox.exposePort(8081, { token: "q", origin: ORIGIN })).url).toMatch(/\?token=q$/);
  });

  it("gives a stable URL for the same token, rotates to another (the old one stops working), and keeps one token per port", async () => {
    const sandbox = pool.create("token-rotate");
    const port = await startPreviewServer(sandbox);
    const first = await sandbox.exposePort(port, { token: "stable_one", origin: ORIGIN });
    expect(first.url).toBe(`https://${port}-${sandbox.id}.preview.test/?token=stable_one`);
    expect((await visit(infoOf(first.url))).status).toBe(200);
    expect((await sandbox.exposePort(port, { token: "stable_one", origin: ORIGIN })).url).toBe(first.url);

    const rotated = await sandbox.exposePort(port, { token: "rotated_two", origin: ORIGIN });
    expect(rotated.url).not.toBe(first.url);
    expect(rotated.exposedAt).toBe(first.exposedAt);
    const old = await visit(infoOf(first.url));
    expect(old.status).toBe(403);
    expect(await errorCode(old)).toBe("PORT_TOKEN_INVALID");
    expect((await visit(infoOf(rotated.url))).status).toBe(200);
    // Exposed again without a token: the port keeps the one it has.
    expect((await sandbox.exposePort(port, { origin: ORIGIN })).url).toBe(rotated.url);

    await expect(sandbox.exposePort(port + 1, { token: "rotated_two", origin: ORIGIN })).rejects.toMatchObject({
      code: "PREVIEW_TOKEN_IN_USE",
      httpStatus: 409,
    });
  });
});

describe("Cloudflare's hostname option", () => {
  it("takes the service's hostname in place of origin, on exposePort and getExposedPorts, and refuses one that is not a host", async () => {
    const sandbox = pool.create("hostname");
    const exposed = await sandbox.exposePort(8080, { hostname: "sandbox.test" });
    expect(exposed.url).toMatch(new RegExp(`^https://8080-${sandbox.id}\\.preview\\.test/\\?token=`));
    expect(await sandbox.getExposedPorts("sandbox.test")).toEqual([exposed]);
    await expect(sandbox.exposePort(8081, { hostname: "evil.test/path" })).rejects.toMatchObject({ code: "INVALID_REQUEST", httpStatus: 400 });
  });
});

describe("a preview URL across its container's life", () => {
  it("goes stale when the container stops, never wakes one, and works again (same URL) once the port is exposed again", async () => {
    const sandbox = pool.create("stale");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { token: "stays_same", origin: ORIGIN });
    expect((await visit(infoOf(url))).status).toBe(200);
    expect((await sandbox.getExposedPorts({ origin: ORIGIN })).map((p) => p.port)).toEqual([port]);

    await crash(sandbox);
    for (const answer of await hammer(url)) expect(answer).toEqual({ status: 410, code: "STALE_PREVIEW_URL" });
    // A stranger (no token, a wrong one) learns nothing more than before: no 410 for them.
    const stranger = await visit(infoOf(url).replace("stays_same", "guessed"));
    expect(stranger.status).toBe(403);
    expect(await errorCode(stranger)).toBe("PORT_TOKEN_INVALID");
    expect((await visit(url.replace(/\?token=.*$/, "info"))).status).toBe(401);
    // Nothing the URL was asked started the container; listing does not either, and lists nothing.
    expect(await sandbox.getExposedPorts({ origin: ORIGIN })).toEqual([]);
    expect((await runtimeState(sandbox.id)).running).toBe(false);

    // Other work starts a new container: the URL stays stale there, its server restarted or not.
    await startPreviewServer(sandbox, port);
    const stale = await visit(infoOf(url));
    expect(stale.status).toBe(410);
    expect(await errorCode(stale)).toBe("STALE_PREVIEW_URL");
    expect(await sandbox.getExposedPorts({ origin: ORIGIN })).toEqual([]);

    // Exposed again (no token given): the same URL serves the new container.
    expect((await sandbox.exposePort(port, { origin: ORIGIN })).url).toBe(url);
    const revived = await visit(infoOf(url));
    expect(revived.status).toBe(200);
    expect(await revived.json()).toMatchObject({ path: "/info" });
  });

  it("answers a stale public port with 410 too, and a random token survives the restart", async () => {
    const sandbox = pool.create("stale-public");
    const port = await startPreviewServer(sandbox);
    const open = await sandbox.exposePort(port, { public: true, origin: ORIGIN });
    const other = await startPreviewServer(sandbox);
    const random = await sandbox.exposePort(other, { origin: ORIGIN });
    await crash(sandbox);
    const response = await visit(`${open.url}info`);
    expect(response.status).toBe(410);
    expect(await errorCode(response)).toBe("STALE_PREVIEW_URL");
    expect((await runtimeState(sandbox.id)).running).toBe(false);
    await startPreviewServer(sandbox, other);
    expect((await sandbox.exposePort(other, { origin: ORIGIN })).url).toBe(random.url);
    expect((await visit(infoOf(random.url))).status).toBe(200);
  });

  it("after destroy, every old URL is 404 and starts nothing; exposing again makes a new token", async () => {
    const sandbox = pool.create("revoked");
    const port = await startPreviewServer(sandbox);
    const { url, exposedAt } = await sandbox.exposePort(port, { origin: ORIGIN });
    const custom = await sandbox.exposePort(port + 1, { token: "after_destroy", origin: ORIGIN });
    expect((await visit(infoOf(url))).status).toBe(200);

    await sandbox.destroy();
    for (const old of [url, custom.url]) {
      for (const answer of await hammer(old)) expect(answer).toEqual({ status: 404, code: "PORT_NOT_EXPOSED" });
    }
    expect((await runtimeState(sandbox.id)).running).toBe(false);

    // Exposed in the next container: a new exposure, with a new token.
    const again = await sandbox.exposePort(port, { origin: ORIGIN });
    expect(again.url).not.toBe(url);
    expect(again.exposedAt).not.toBe(exposedAt);
    expect((await visit(infoOf(url))).status).toBe(403);
  });
});
