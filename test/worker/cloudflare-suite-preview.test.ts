/**
 * Cloudflare's preview-URL cases (their preview-url lifecycle, restart and redirect-proxy workflows,
 * WebSocket port exposure and WebSocket connections), ported to getSandbox with the Worker serving
 * the URLs: a URL reaches the service while its port is exposed in the current container; once the
 * container stops it is stale (410 STALE_PREVIEW_URL) and wakes nothing, until exposePort is called
 * again; revoked, rotated and destroyed URLs are refused, saying why (theirs: always 404
 * INVALID_TOKEN); redirects and WebSockets pass through.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { ExposePortOptions } from "../../src/client/index.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { eventually, runtimeState } from "./helpers.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;

/** A request to a preview URL as a program sends it (no API token). */
function visit(url: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(new Request(url, { redirect: "manual", ...init }));
}

/** The URL of `path` on the service behind a preview URL (its token kept). */
function at(previewUrl: string, path: string): string {
  const url = new URL(previewUrl);
  url.pathname = path;
  return url.toString();
}

/** Starts the preview server on `port` in the sandbox and waits until it listens. */
async function serve(sandbox: SandboxClient, port: number): Promise<void> {
  await sandbox.writeFile("/workspace/preview-server.cjs", PREVIEW_SERVER_SOURCE);
  const process = await sandbox.startProcess(`exec node /workspace/preview-server.cjs ${port} 0.0.0.0`);
  await process.waitForPort(port, { timeout: 15_000 });
}

/** Stops the sandbox's container (the Durable Object's own stop, as Cloudflare's suite does) and waits until it is down. */
async function stopContainer(sandbox: SandboxClient): Promise<void> {
  const stub = env.Sandbox.get(env.Sandbox.idFromName(sandbox.id)) as unknown as { stop(): Promise<void> };
  await stub.stop();
  expect(await eventually(async () => !(await runtimeState(sandbox.id)).running, 20_000, 200)).toBe(true);
}

const isRunning = async (sandbox: SandboxClient) => (await runtimeState(sandbox.id)).running;

async function codeOf(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

/** Opens a WebSocket through a preview URL; resolves with the echo of `message`. */
async function echoOver(url: string, message: string): Promise<string> {
  const response = await visit(url, { headers: { upgrade: "websocket" } });
  expect(response.status).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const reply = new Promise<string>((resolve) => socket.addEventListener("message", (event) => resolve(String(event.data))));
  socket.send(message);
  const got = await reply;
  socket.close();
  return got;
}

describe("preview URL lifecycle", () => {
  it("a valid preview URL reaches the service in the current container", async () => {
    const sandbox = sandboxes.create("cf-preview-valid");
    await serve(sandbox, 9851);
    const { url } = await sandbox.exposePort(9851, { name: "lifecycle" });
    const response = await visit(at(url, "/info"));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: "/info" });
  });

  it("takes Cloudflare's hostname option", async () => {
    const sandbox = sandboxes.create("cf-preview-hostname");
    await serve(sandbox, 9859);
    const { url } = await sandbox.exposePort(9859, { hostname: "preview.test" } as ExposePortOptions);
    expect((await visit(at(url, "/info"))).status).toBe(200);
  });

  it("a WebSocket preview URL connects only while exposed in the current container", async () => {
    const sandbox = sandboxes.create("cf-preview-ws");
    await serve(sandbox, 9852);
    const { url } = await sandbox.exposePort(9852, { name: "ws" });
    expect(await echoOver(at(url, "/socket"), "preview websocket lifecycle")).toBe("echo:preview websocket lifecycle");
    await stopContainer(sandbox);
    const stale = await visit(at(url, "/socket"), { headers: { upgrade: "websocket" } });
    expect(stale.status).toBe(410);
    expect(await isRunning(sandbox)).toBe(false);
  });

  it("after the container stops, the URL is stale and does not wake it", async () => {
    const sandbox = sandboxes.create("cf-preview-stale");
    await serve(sandbox, 9853);
    const { url } = await sandbox.exposePort(9853, { name: "stale" });
    expect((await visit(at(url, "/info"))).status).toBe(200);
    await stopContainer(sandbox);
    const stale = await visit(at(url, "/info"));
    expect(stale.status).toBe(410);
    expect(await codeOf(stale)).toBe("STALE_PREVIEW_URL");
    expect(await isRunning(sandbox)).toBe(false);
  });

  it("port APIs report only ports exposed in the current container, without waking it", async () => {
    const sandbox = sandboxes.create("cf-preview-apis");
    await serve(sandbox, 9854);
    await sandbox.exposePort(9854, { name: "apis" });
    expect((await sandbox.getExposedPorts()).map((p) => p.port)).toEqual([9854]);
    await stopContainer(sandbox);
    expect(await sandbox.getExposedPorts()).toEqual([]);
    expect(await isRunning(sandbox)).toBe(false);
  });

  it("an old URL with a rotated token is refused without waking the container", async () => {
    const sandbox = sandboxes.create("cf-preview-rotated");
    await serve(sandbox, 9855);
    const old = await sandbox.exposePort(9855, { name: "rotated", token: "first_token" } as ExposePortOptions);
    await sandbox.unexposePort(9855);
    const fresh = await sandbox.exposePort(9855, { name: "rotated", token: "second_token" } as ExposePortOptions);
    expect(fresh.url).not.toBe(old.url);
    await stopContainer(sandbox);
    const response = await visit(at(old.url, "/info"));
    expect(response.status).toBe(403);
    expect(await codeOf(response)).toBe("PORT_TOKEN_INVALID");
    expect(await isRunning(sandbox)).toBe(false);
  });

  it("a URL revoked after the container stopped is refused without waking it", async () => {
    const sandbox = sandboxes.create("cf-preview-revoked");
    await serve(sandbox, 9856);
    const { url } = await sandbox.exposePort(9856, { name: "revoked" });
    await stopContainer(sandbox);
    await sandbox.unexposePort(9856);
    const response = await visit(at(url, "/info"));
    expect(response.status).toBe(404);
    expect(await codeOf(response)).toBe("PORT_NOT_EXPOSED");
    expect(await isRunning(sandbox)).toBe(false);
  });

  it("unexposing a port that is not exposed succeeds (idempotent)", async () => {
    const sandbox = sandboxes.create("cf-preview-unexpose");
    await expect(sandbox.unexposePort(9860)).resolves.toMatchObject({ port: 9860 });
  });

  it("the same URL stays stale after a restart until exposePort is called again, then works", async () => {
    const sandbox = sandboxes.create("cf-preview-reused");
    await serve(sandbox, 9857);
    const { url } = await sandbox.exposePort(9857, { name: "restart-test", token: "stable_reboot" } as ExposePortOptions);
    expect(url).toContain("stable_reboot");
    expect((await visit(at(url, "/info"))).status).toBe(200);
    await stopContainer(sandbox);
    const stale = await visit(at(url, "/info"));
    expect(stale.status).toBe(410);
    expect(await codeOf(stale)).toBe("STALE_PREVIEW_URL");
    await serve(sandbox, 9857);
    const again = await sandbox.exposePort(9857, { name: "restart-test", token: "stable_reboot" } as ExposePortOptions);
    expect(again.url).toBe(url);
    expect((await visit(at(url, "/info"))).status).toBe(200);
  });

  it("an old URL stays stale when unrelated work starts a new container", async () => {
    const sandbox = sandboxes.create("cf-preview-unrelated");
    await serve(sandbox, 9858);
    const { url } = await sandbox.exposePort(9858, { name: "unrelated" });
    await stopContainer(sandbox);
    expect((await sandbox.exec("echo awake")).stdout).toBe("awake\n");
    await serve(sandbox, 9858);
    const stale = await visit(at(url, "/info"));
    expect(stale.status).toBe(410);
    expect(await codeOf(stale)).toBe("STALE_PREVIEW_URL");
    expect(await isRunning(sandbox)).toBe(true);
  });

  it("an old URL is refused after the sandbox is destroyed", async () => {
    const sandbox = sandboxes.create("cf-preview-destroyed");
    await serve(sandbox, 9861);
    const { url } = await sandbox.exposePort(9861, { name: "destroy" });
    await sandbox.destroy();
    const response = await visit(at(url, "/info"));
    expect(response.status).toBe(404);
    expect(await codeOf(response)).toBe("PORT_NOT_EXPOSED");
  });
});

describe("redirects through a preview URL", () => {
  it("passes a 3xx answer back as it is, without following it", async () => {
    const sandbox = sandboxes.create("cf-preview-redirect");
    await serve(sandbox, 9850);
    const { url } = await sandbox.exposePort(9850, { name: "redirect" });
    const target = new URL(at(url, "/reply"));
    target.searchParams.set("status", "302");
    target.searchParams.append("h", "location: /redirected");
    const response = await visit(target.toString());
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/redirected");
  });
});

describe("WebSocket connections", () => {
  it("echoes messages over several concurrent connections", async () => {
    const sandbox = sandboxes.create("cf-ws-connect");
    await serve(sandbox, 8080);
    const { url } = await sandbox.exposePort(8080, { name: "echo" });
    expect(await echoOver(at(url, "/ws/echo"), "Hello WebSocket")).toBe("echo:Hello WebSocket");
    const replies = await Promise.all([0, 1, 2].map((i) => echoOver(at(url, "/ws/echo"), `message ${i}`)));
    expect(replies).toEqual(["echo:message 0", "echo:message 1", "echo:message 2"]);
  });
});
