/**
 * A page behind a preview port must never take over the service's origin. In workerd, against a real
 * server in a sandbox: preview hosts (`*.localhost`, `*.<preview domain>`) route to their port and
 * never to the console or the API; path-based URLs live only on their own origin; a port's answer
 * cannot widen a service worker's scope; no path becomes a redirect to another host.
 */
import { env, exports } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import type { Env } from "../../src/env.ts";
import worker from "../../src/index.ts";
import { previewUrl } from "../../src/rpc/ports.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { sandboxPool } from "./helpers.ts";

const entry = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const ORIGIN = "http://sandbox.test";
const PATHS = "http://paths.test";
const bearer = { authorization: `Bearer ${env.SANDBOX_API_TOKEN}` };
const navigate = { "sec-fetch-mode": "navigate" };
const serviceWorkerScript = { "service-worker": "script", "sec-fetch-dest": "serviceworker" };

const pool = sandboxPool();
afterAll(pool.destroyAll);

function visit(url: string, init: RequestInit = {}): Promise<Response> {
  return entry.fetch(new Request(url, { redirect: "manual", ...init }));
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { code: string }).code;
}

/** A sandbox with the preview server on an exposed public port; its host-based and path-based bases. */
async function servedPort(sandbox: SandboxClient): Promise<{ port: number; host: string; local: string }> {
  await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
  const process = await sandbox.startProcess("exec node preview-server.cjs 0");
  const { match } = await process.waitForLog(/listening (\d+)/, 15_000);
  const port = Number((match as RegExpMatchArray)[1]);
  const { url } = await sandbox.exposePort(port, { public: true });
  return { port, host: url, local: `http://${port}-${sandbox.id}.localhost:8787/` };
}

/** `/reply` of the preview server, answering with these headers (and status). */
function reply(base: string, headers: string[], status = 200): string {
  const query = new URLSearchParams([["status", String(status)], ...headers.map((header): [string, string] => ["h", header])]);
  return `${base}reply?${query}`;
}

describe("preview hosts", () => {
  it("routes <port>-<id>.localhost to the port, as it does the preview domain", async () => {
    const sandbox = pool.create("origins-local");
    const { local } = await servedPort(sandbox);
    const response = await visit(`${local}info?x=1`);
    expect(response.status).toBe(200);
    const seen = (await response.json()) as { path: string; query: string; headers: Record<string, string> };
    expect(seen).toMatchObject({ path: "/info", query: "?x=1" });
    expect(seen.headers["x-forwarded-host"]).toBe(new URL(local).host);
    expect(seen.headers["x-forwarded-prefix"]).toBe("");
  });

  it("never answers a host that looks like a preview host with the console or the API", async () => {
    const consoleOn = { ...(env as Env), SANDBOX_CONSOLE: "on" };
    const hosts = [
      "http://8080-nothing-here.localhost:8787/",
      "http://www.localhost:8787/",
      "http://123456-x.localhost/",
      "http://a.b.localhost/v1",
      "https://8080-nothing-here.preview.test/",
      "https://console.preview.test/v1/docs",
    ];
    for (const host of hosts) {
      for (const headers of [{}, bearer]) {
        const response = await worker.fetch(new Request(host, { headers }), consoleOn, createExecutionContext());
        expect(response.status, host).toBe(404);
        expect(response.headers.get("content-type"), host).toContain("application/json");
        expect(await errorCode(response), host).toBe("PORT_NOT_EXPOSED");
      }
    }
    // The service's own hosts still serve the console.
    const page = await worker.fetch(new Request("http://localhost:8787/"), consoleOn, createExecutionContext());
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});

describe("path-based preview URLs", () => {
  it("are served on their own origin only, which serves nothing else", async () => {
    const sandbox = pool.create("Origins-Paths");
    const { port, host } = await servedPort(sandbox);
    expect(host).toBe(`${PATHS}/v1/sandboxes/${sandbox.id}/ports/${port}/`);
    expect((await visit(`${host}info`)).status).toBe(200);

    // On the API's origin the same path is not a preview.
    const onApi = await visit(`${ORIGIN}/v1/sandboxes/${sandbox.id}/ports/${port}/info`, { headers: bearer });
    expect(onApi.status).toBe(404);
    expect(await errorCode(onApi)).toBe("NOT_FOUND");

    // On the preview origin neither the API nor the console answers, with or without the token.
    const consoleOn = { ...(env as Env), SANDBOX_CONSOLE: "on" };
    for (const path of ["/", "/v1", "/v1/docs", "/v1/openapi.json", `/v1/sandboxes/${sandbox.id}/ports`, `/v1/sandboxes/${sandbox.id}/exec`, "/console/app.js"]) {
      const response = await worker.fetch(new Request(`${PATHS}${path}`, { headers: bearer }), consoleOn, createExecutionContext());
      expect(response.status, path).toBe(404);
      expect(await errorCode(response), path).toBe("PREVIEW_ORIGIN_ONLY");
    }
  });
});

describe("a port's answer", () => {
  it("never carries Service-Worker-Allowed", async () => {
    const hosted = await servedPort(pool.create("origins-swa"));
    const pathed = await servedPort(pool.create("Origins-SWA"));
    for (const base of [hosted.host, hosted.local, pathed.host]) {
      const response = await visit(reply(base, ["service-worker-allowed: /", "x-app: kept"]));
      expect(response.status, base).toBe(200);
      expect(response.headers.get("service-worker-allowed"), base).toBeNull();
      expect(response.headers.get("x-app"), base).toBe("kept");
    }
  });

  it("refuses a service worker script that asks for a scope outside its port", async () => {
    const sandbox = pool.create("Origins-SW");
    const { port, host } = await servedPort(sandbox);
    const prefix = `/v1/sandboxes/${sandbox.id}/ports/${port}`;
    for (const allowed of ["/", "/v1/", `/v1/sandboxes/${sandbox.id}/`, `/v1/sandboxes/${sandbox.id}/ports/${port}0/`, `${ORIGIN}/`, "../../../"]) {
      const response = await visit(reply(host, [`service-worker-allowed: ${allowed}`, "content-type: text/javascript"]), { headers: serviceWorkerScript });
      expect(response.status, allowed).toBe(403);
      expect(await errorCode(response), allowed).toBe("SERVICE_WORKER_SCOPE_REFUSED");
    }
    // Inside the port's own prefix the script is served, its scope no wider than its folder.
    const inside = await visit(reply(host, [`service-worker-allowed: ${prefix}/`, "content-type: text/javascript"]), { headers: serviceWorkerScript });
    expect(inside.status).toBe(200);
    expect(inside.headers.get("service-worker-allowed")).toBeNull();

    // On a host of its own, every scope is the port's own origin: served, the header removed.
    const hosted = await servedPort(pool.create("origins-sw-host"));
    const own = await visit(reply(hosted.local, ["service-worker-allowed: /", "content-type: text/javascript"]), { headers: serviceWorkerScript });
    expect(own.status).toBe(200);
    expect(own.headers.get("service-worker-allowed")).toBeNull();
  });

  it("cannot redirect to another host through a path, the token's redirect included", async () => {
    const sandbox = pool.create("origins-redirect");
    await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
    const process = await sandbox.startProcess("exec node preview-server.cjs 0");
    const port = Number(((await process.waitForLog(/listening (\d+)/, 15_000)).match as RegExpMatchArray)[1]);
    const { url } = await sandbox.exposePort(port);
    const base = url.replace(/\?token=.*$/, "");
    const token = new URL(url).searchParams.get("token")!;
    const stays = (response: Response, where: string) => {
      const location = response.headers.get("location")!;
      expect(location, where).not.toBeNull();
      expect(new URL(location, where).host, `${where} → ${location}`).toBe(new URL(where).host);
    };

    // The token's redirect (a browser opening the URL) keeps the path on the port's host.
    for (const path of ["//evil.example/x", "///evil.example/x", "/%2F/evil.example/x"]) {
      const where = `${base.slice(0, -1)}${path}?token=${token}`;
      const response = await visit(where, { headers: navigate });
      expect(response.status, path).toBe(302);
      stays(response, where);
    }
    for (const host of [base, `http://${port}-${sandbox.id}.localhost:8787/`]) {
      const where = `${host.slice(0, -1)}//evil.example/x?token=${token}`;
      const response = await visit(where, { headers: navigate });
      expect(response.headers.get("location")).toBe("/evil.example/x");
      stays(response, where);
    }

    // The program's own redirects: a path that is a host in disguise stays a path; a full URL is its choice.
    const app = { ...bearer };
    for (const location of ["//evil.example/x", "/\\evil.example/x", "\\\\evil.example/x", "/\t/evil.example/x"]) {
      const response = await visit(reply(base, [`location: ${location}`], 302), { headers: app });
      expect(response.status, location).toBe(302);
      stays(response, base);
    }
    const elsewhere = await visit(reply(base, ["location: https://docs.example/"], 302), { headers: app });
    expect(elsewhere.headers.get("location")).toBe("https://docs.example/");

    // The service's own origin has no redirect to offer either.
    const onApi = await visit(`${ORIGIN}//evil.example/x`);
    expect(onApi.status).toBe(404);
    expect(onApi.headers.get("location")).toBeNull();
  });
});

describe("the URL exposePort hands out", () => {
  const settings = {};
  it("is <port>-<id>.localhost on a loopback origin, and nothing where no origin of its own can be made", () => {
    expect(previewUrl({ sandboxId: "web", port: 8080, origin: "http://127.0.0.1:8787", settings })).toBe("http://8080-web.localhost:8787/");
    expect(previewUrl({ sandboxId: "web", port: 8080, origin: "http://localhost:9000", settings, token: "t" })).toBe("http://8080-web.localhost:9000/?token=t");
    expect(previewUrl({ sandboxId: "web", port: 8080, origin: "http://[::1]:8787", settings })).toBe("http://8080-web.localhost:8787/");
    expect(previewUrl({ sandboxId: "web", port: 8080, origin: "http://127.0.0.1:8787", settings: { previewDomain: "preview.example.com" } })).toBe(
      "https://8080-web.preview.example.com/",
    );
    expect(previewUrl({ sandboxId: "Web", port: 8080, origin: "http://127.0.0.1:8787", settings: { pathOrigin: "http://localhost:8787" } })).toBe(
      "http://localhost:8787/v1/sandboxes/Web/ports/8080/",
    );
    expect(() => previewUrl({ sandboxId: "Web", port: 8080, origin: "http://127.0.0.1:8787", settings })).toThrow(
      expect.objectContaining({ code: "SANDBOX_ID_NOT_HOST_SAFE", httpStatus: 400 }),
    );
    for (const origin of ["https://sandbox.example.com", undefined]) {
      expect(() => previewUrl({ sandboxId: "web", port: 8080, ...(origin ? { origin } : {}), settings })).toThrow(
        expect.objectContaining({ code: "PREVIEW_DOMAIN_NOT_CONFIGURED", httpStatus: 501 }),
      );
    }
  });
});
