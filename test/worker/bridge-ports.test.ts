/**
 * The Bridge API's port resolution and create body in the Worker: exposedPorts given at create are
 * exposed and resolve by `GET /v1/sandbox/:id/tunnel/:port`; a port that is not exposed is 404
 * `port_not_exposed` (and resolving it exposes nothing); bad ports and bucket mounts at create are
 * refused in the Bridge's error shape before any sandbox is made. A tunnel made again after the
 * sandbox was destroyed is a new one (a new id, a new token); deleting one twice is still 204.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const ORIGIN = "http://sandbox.test";

function bridge(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${env.SANDBOX_API_TOKEN}`);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return worker.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }));
}

describe("Bridge port resolution", () => {
  it("resolves the ports exposed at create, refuses others, and lists them", async () => {
    const created = await bridge("/v1/sandbox", { method: "POST", body: JSON.stringify({ exposedPorts: [8080, 9090, 8080], timeoutMs: 5000 }) });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };

    const resolved = await bridge(`/v1/sandbox/${id}/tunnel/8080`);
    expect(resolved.status).toBe(200);
    const tunnel = (await resolved.json()) as { port: number; url: string; hostname: string };
    expect(tunnel).toMatchObject({ id: expect.stringMatching(new RegExp(`^${id}-8080-[a-z0-9]+$`)), port: 8080, hostname: `8080-${id}.preview.test`, createdAt: expect.any(String) });
    expect(tunnel.url).toMatch(new RegExp(`^https://8080-${id}\\.preview\\.test/\\?token=.+`));
    // Resolving again answers the same URL (the same token).
    expect(((await (await bridge(`/v1/sandbox/${id}/tunnel/8080`)).json()) as { url: string }).url).toBe(tunnel.url);

    const listed = (await (await bridge(`/v1/sandbox/${id}/tunnel`)).json()) as { tunnels: { port: number }[] };
    expect(listed.tunnels.map((t) => t.port).sort()).toEqual([8080, 9090]);

    const missing = await bridge(`/v1/sandbox/${id}/tunnel/7070`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: "port_not_exposed", error: expect.stringContaining("7070") });
    // Resolving did not expose it.
    expect((await bridge(`/v1/sandbox/${id}/tunnel/7070`)).status).toBe(404);
    const notAPort = await bridge(`/v1/sandbox/${id}/tunnel/http`);
    expect(notAPort.status).toBe(400);
    expect(await notAPort.json()).toMatchObject({ code: "invalid_request" });

    expect((await bridge(`/v1/sandbox/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("gives a tunnel made again after destroy a new id and token, and deletes idempotently", async () => {
    const created = await bridge("/v1/sandbox", { method: "POST", body: "{}" });
    const { id } = (await created.json()) as { id: string };
    const open = async () => {
      const response = await bridge(`/v1/sandbox/${id}/tunnel/8080`, { method: "POST", body: "{}" });
      expect(response.status).toBe(200);
      return (await response.json()) as { id: string; url: string; createdAt: string };
    };
    const first = await open();
    // Asked again: the same tunnel.
    expect(await open()).toEqual(first);
    expect((await bridge(`/v1/sandbox/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await bridge(`/v1/sandbox/${id}/tunnel/8080`)).status).toBe(404);
    const second = await open();
    expect(second.id).not.toBe(first.id);
    expect(second.url).not.toBe(first.url);
    for (let i = 0; i < 2; i++) expect((await bridge(`/v1/sandbox/${id}/tunnel/8080`, { method: "DELETE" })).status).toBe(204);
    expect((await bridge(`/v1/sandbox/${id}/tunnel/9999`, { method: "DELETE" })).status).toBe(204);
    expect((await bridge(`/v1/sandbox/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses bad ports and bucket mounts at create, making nothing", async () => {
    for (const exposedPorts of [[80], [3000], [70000], ["8080"]]) {
      const refused = await bridge("/v1/sandbox", { method: "POST", body: JSON.stringify({ exposedPorts }) });
      expect(refused.status, JSON.stringify(exposedPorts)).toBe(400);
      expect(await refused.json()).toMatchObject({ code: "invalid_request" });
    }
    const mounts = await bridge("/v1/sandbox", { method: "POST", body: JSON.stringify({ mounts: [{ bucket: "b", mountPath: "/workspace/data" }] }) });
    expect(mounts.status).toBe(501);
    expect(await mounts.json()).toEqual({ code: "not_implemented", error: expect.stringContaining("Mounting a bucket is not available") });
    // An empty body, and one with nothing to do, still just name a sandbox.
    for (const body of [undefined, "{}", JSON.stringify({ mounts: [] })]) {
      const made = await bridge("/v1/sandbox", { method: "POST", ...(body === undefined ? {} : { body }) });
      expect(made.status).toBe(200);
      expect(await made.json()).toEqual({ id: expect.stringMatching(/^[a-z2-7]{26}$/) });
    }
  });
});
