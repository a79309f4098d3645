/**
 * Preview ports through the whole chain: a real server started inside the sandbox, reached through
 * the Worker (both URL forms), the Durable Object (registry, tokens) and the container server's proxy.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { pushedBody, readUntil } from "../web-streams.ts";
import { runtimeState, sandboxPool, uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));
const ORIGIN = "http://sandbox.test";
/** Where path-based preview URLs are served in these tests (SANDBOX_PREVIEW_PATH_ORIGIN), apart from the API's origin. */
const PATHS = "http://paths.test";
const bearer = { authorization: `Bearer ${env.SANDBOX_API_TOKEN}` };

const pool = sandboxPool();
afterAll(pool.destroyAll);

/** Starts the preview server inside the sandbox; resolves with the port it listens on. */
async function startPreviewServer(sandbox: SandboxClient): Promise<number> {
  await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
  const process = await sandbox.startProcess("exec node preview-server.cjs 0");
  const { match } = await process.waitForLog(/listening (\d+)/, 15_000);
  return Number((match as RegExpMatchArray)[1]);
}

/** A request to the Worker as a browser would send it (no API token unless given). */
function visit(url: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(new URL(url, ORIGIN), { redirect: "manual", ...init }));
}

/** What a browser sends when it opens a page (Fetch Metadata). */
const navigate = { "sec-fetch-mode": "navigate" };

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

describe("exposing ports", () => {
  it("checks the port without starting a container; exposing again and unexposing are idempotent", async () => {
    const sandbox = pool.create("Ports-check");
    await expect(sandbox.exposePort(80)).rejects.toMatchObject({ code: "INVALID_PORT", httpStatus: 400 });
    await expect(sandbox.exposePort(3000)).rejects.toMatchObject({ code: "INVALID_PORT" });
    await expect(sandbox.exposePort(70000)).rejects.toMatchObject({ code: "INVALID_PORT" });
    await expect(sandbox.exposePort(8080.5)).rejects.toMatchObject({ code: "INVALID_PORT" });
    expect((await runtimeState(sandbox.id)).running).toBe(false);
    const first = await sandbox.exposePort(8080, { name: "web" });
    expect(first).toMatchObject({ port: 8080, name: "web", public: false, status: "active" });
    // Exposed again: the same URL (the same token), the name kept.
    expect(await sandbox.exposePort(8080)).toEqual(first);
    expect(await sandbox.unexposePort(8081)).toEqual({ port: 8081 });
    expect(await sandbox.unexposePort(8080)).toEqual({ port: 8080 });
    expect(await sandbox.unexposePort(8080)).toEqual({ port: 8080 });
    await expect(sandbox.unexposePort(80)).rejects.toMatchObject({ code: "INVALID_PORT" });
    // Exposed anew after unexposing: a new token.
    expect((await sandbox.exposePort(8080)).url).not.toBe(first.url);
  });

  it("answers the same codes over /v1 and lists what is exposed", async () => {
    const id = uniqueId("Ports-v1");
    const http = getHttpSandbox(id, { url: ORIGIN, token: env.SANDBOX_API_TOKEN!, fetch: workerFetch });
    const low = await workerFetch(`${ORIGIN}/v1/sandboxes/${id}/ports`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: '{"port":80}' });
    expect(low.status).toBe(400);
    expect(await errorCode(low)).toBe("INVALID_PORT");
    const exposed = await http.exposePort(5173, { name: "vite" });
    expect(exposed).toMatchObject({ port: 5173, name: "vite", public: false });
    // This id is not a host name (capitals), so its URL is path-based, on the origin set apart for them.
    expect(exposed.url).toMatch(new RegExp(`^${PATHS}/v1/sandboxes/${id}/ports/5173/\\?token=[A-Za-z0-9_-]{43}$`));
    await http.exposePort(5174, { public: true });
    expect((await http.getExposedPorts()).map(({ port, public: open }) => [port, open])).toEqual([
      [5173, false],
      [5174, true],
    ]);
    expect(await http.unexposePort(5173)).toEqual({ port: 5173 });
    expect((await http.getExposedPorts()).map(({ port }) => port)).toEqual([5174]);
    // Unexposing a port that is not exposed answers 200 over /v1 too.
    const again = await workerFetch(`${ORIGIN}/v1/sandboxes/${id}/ports/5173`, { method: "DELETE", headers: bearer });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ port: 5173 });
    await http.destroy();
  });
});

describe("a private port (path-based URLs)", () => {
  it("trades the URL's token for a cookie scoped to the port, then serves with the cookie or the API token", async () => {
    const sandbox = pool.create("Ports-private");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { origin: ORIGIN });
    const prefix = `/v1/sandboxes/${sandbox.id}/ports/${port}`;
    const plain = url.replace(/\?token=.*$/, "");

    const none = await visit(`${plain}info`);
    expect(none.status).toBe(401);
    expect(await errorCode(none)).toBe("PORT_TOKEN_REQUIRED");
    const wrong = await visit(`${plain}info?token=not-the-token`);
    expect(wrong.status).toBe(403);
    expect(await errorCode(wrong)).toBe("PORT_TOKEN_INVALID");

    // A program's request with the token is served as it is (it would keep no cookie).
    const direct = await visit(url.replace("/?token=", "/info?keep=1&token="));
    expect(direct.status).toBe(200);
    expect(await direct.json()).toMatchObject({ path: "/info", query: "?keep=1" });

    const first = await visit(url.replace("/?token=", "/info?keep=1&token="), { headers: navigate });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe(`${prefix}/info?keep=1`);
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^sandbox_port_token=[A-Za-z0-9_-]+; Path=${prefix}; HttpOnly; SameSite=Lax$`));
    const token = cookie.split(";")[0]!;

    const withCookie = await visit(`${PATHS}${prefix}/info?keep=1`, { headers: { cookie: `other=1; ${token}` } });
    expect(withCookie.status).toBe(200);
    const seen = (await withCookie.json()) as { path: string; query: string; headers: Record<string, string> };
    expect(seen).toMatchObject({ path: "/info", query: "?keep=1" });
    expect(seen.headers["x-forwarded-prefix"]).toBe(prefix);
    // The service's credentials never reach the app.
    expect(seen.headers.cookie).toBe("other=1");
    expect(seen.headers.authorization).toBeUndefined();

    const withApiToken = await visit(`${plain}info`, { headers: { ...bearer } });
    expect(withApiToken.status).toBe(200);
    expect(((await withApiToken.json()) as { headers: Record<string, string> }).headers.authorization).toBeUndefined();

    const forged = await visit(`${plain}info`, { headers: { cookie: "sandbox_port_token=forged" } });
    expect(forged.status).toBe(403);
    expect(await errorCode(forged)).toBe("PORT_TOKEN_INVALID");
  });

  it("streams a request body in and the answer out, chunks arriving before the end", async () => {
    const sandbox = pool.create("Ports-stream");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { origin: ORIGIN });
    const base = url.replace(/\?token=.*$/, "");

    const upload = pushedBody();
    upload.push("first-chunk;");
    const echo = await visit(`${base}echo`, { method: "POST", body: upload.body, headers: { ...bearer } });
    expect(echo.status).toBe(200);
    const reader = echo.body!.getReader();
    const first = await readUntil(reader, "first-chunk;");
    expect(first).toBe("first-chunk;");
    upload.push("second-chunk");
    upload.end();
    expect(await readUntil(reader, "second-chunk", first)).toBe("first-chunk;second-chunk");

    const drip = await visit(`${base}drip?n=3&ms=400`, { headers: { ...bearer } });
    const dripReader = drip.body!.getReader();
    const start = await readUntil(dripReader, "drip-1");
    expect(start).not.toContain("drip-3");
    expect(await readUntil(dripReader, "drip-3", start)).toBe("drip-1\ndrip-2\ndrip-3\n");
  });

  it("passes a WebSocket through the Worker, the Durable Object and the container", async () => {
    const sandbox = pool.create("Ports-ws");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { origin: ORIGIN });
    const response = await visit(url.replace(/\?token=.*$/, "socket"), { headers: { ...bearer, upgrade: "websocket" } });
    expect(response.status).toBe(101);
    const socket = response.webSocket!;
    socket.accept();
    const got: string[] = [];
    const done = new Promise<void>((resolve) =>
      socket.addEventListener("message", (event) => {
        got.push(typeof event.data === "string" ? event.data : "binary");
        if (got.length === 2) resolve();
      }),
    );
    socket.send("one");
    socket.send("two");
    await done;
    socket.close();
    expect(got).toEqual(["echo:one", "echo:two"]);
  });
});

describe("ports that cannot be reached", () => {
  it("answers a port that was never exposed with 404 without waking the container", async () => {
    const id = uniqueId("Ports-asleep");
    const response = await visit(`${PATHS}/v1/sandboxes/${id}/ports/8080/`, { headers: { ...bearer } });
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe("PORT_NOT_EXPOSED");
    expect((await runtimeState(id)).running).toBe(false);
  });

  it("stops serving an unexposed port, its token and cookie with it", async () => {
    const sandbox = pool.create("Ports-revoked");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { origin: ORIGIN });
    const first = await visit(url, { headers: navigate });
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    expect((await visit(url.replace(/\?token=.*$/, "info"), { headers: { cookie } })).status).toBe(200);
    await sandbox.unexposePort(port);
    for (const response of [await visit(url), await visit(url.replace(/\?token=.*$/, "info"), { headers: { cookie } })]) {
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("PORT_NOT_EXPOSED");
    }
  });

  it("answers an exposed port nothing listens on with 502 PORT_NOT_LISTENING", async () => {
    const sandbox = pool.create("Ports-idle");
    await sandbox.exposePort(45678, { public: true, origin: ORIGIN });
    const response = await visit(`${PATHS}/v1/sandboxes/${sandbox.id}/ports/45678/`);
    expect(response.status).toBe(502);
    expect(await errorCode(response)).toBe("PORT_NOT_LISTENING");
  });
});

describe("a public port, and host-based URLs", () => {
  it("serves a public port to anyone, the app's own ?token= included", async () => {
    const sandbox = pool.create("Ports-public");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port, { public: true, origin: ORIGIN });
    expect(url).toBe(`${PATHS}/v1/sandboxes/${sandbox.id}/ports/${port}/`);
    const response = await visit(`${url}info?token=apps-own`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: "/info", query: "?token=apps-own" });
  });

  it("serves <port>-<id>.<preview domain> by its Host, with the cookie scoped to that host", async () => {
    const sandbox = pool.create("ports-host");
    const port = await startPreviewServer(sandbox);
    const { url } = await sandbox.exposePort(port);
    expect(url).toMatch(new RegExp(`^https://${port}-${sandbox.id}\\.preview\\.test/\\?token=`));
    const first = await visit(url.replace("/?token=", "/info?token="), { headers: navigate });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("/info");
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
    const served = await visit(`https://${port}-${sandbox.id}.preview.test/info`, { headers: { cookie: cookie.split(";")[0]! } });
    expect(served.status).toBe(200);
    const seen = (await served.json()) as { path: string; headers: Record<string, string> };
    expect(seen.path).toBe("/info");
    expect(seen.headers["x-forwarded-prefix"]).toBe("");
    expect(seen.headers["x-forwarded-host"]).toBe(`${port}-${sandbox.id}.preview.test`);
    // Without anything, the host-based form refuses like the path-based one.
    expect((await visit(`https://${port}-${sandbox.id}.preview.test/info`)).status).toBe(401);
  });
});
