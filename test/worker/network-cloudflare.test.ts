/**
 * Egress on Cloudflare, as far as workerd without the platform's containers can show it. The
 * Durable Object sees a platform-shaped container (platform-container.ts: a real container's
 * lifecycle, not the local runtime's stand-in) and registers the platform's outbound interception
 * on it; the tests then hand requests to the very fetcher it registered (the package's
 * ContainerProxy entrypoint with the props our Durable Object made), as the platform hands a
 * container's requests over, and a server on loopback stands for the internet. What only the
 * platform can show (that a container's traffic really goes to that fetcher) is not claimed here.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, inject, it } from "vitest";
import { EGRESS_HEADER, refusalBody, refusalHeader, UPSTREAM_FAILED } from "../../protocol/egress-refusal.ts";
import { readSseStream, type SseMessage } from "../../protocol/sse.ts";
import type { AuditEvent } from "../../src/rpc/network.ts";
import { AuditRing } from "../../src/sandbox/cloudflare-egress/audit-ring.ts";
import { networkAllowedBy, PlatformEgress } from "../../src/sandbox/cloudflare-egress/platform-egress.ts";
import { NetworkSettings } from "../../src/sandbox/network.ts";
import { apiCall, eventually, uniqueId } from "./helpers.ts";
import { platformSandbox, type PlatformSandbox } from "./platform-container.ts";

const target = new URL(inject("egressTargetUrl"));
const port = Number(target.port);
const SECRET = "tok-7f3a9c-never-shown";
const made: PlatformSandbox[] = [];
afterAll(() => Promise.all(made.map(({ sandbox }) => sandbox.destroy().catch(() => undefined))));

async function fresh(label: string): Promise<PlatformSandbox> {
  const sandbox = await platformSandbox(label);
  made.push(sandbox);
  return sandbox;
}

/** Echoed by the target: what reached it. */
function echoed(body: string): { method: string; path: string; headers: Record<string, string>; body: string } {
  return JSON.parse(body) as never;
}

describe("the interception the Durable Object registers", () => {
  it("is the catch-all for HTTP and every HTTPS destination, in place at once; the internet switch follows the policy from the next start", async () => {
    const { sandbox, recorded } = await fresh("cf-register");
    expect(await sandbox.getNetworkPolicy()).toEqual({ policy: { default: "allow", rules: [], inject: [] }, enforced: false, missingSecrets: [] });
    await sandbox.exec("true");
    // No policy yet: nothing intercepted, the container has the internet.
    expect(await recorded()).toEqual({ starts: [{ enableInternet: true }], interceptions: [] });
    expect((await sandbox.getNetworkPolicy()).enforced).toBe(false);

    const state = await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: "localhost" }] });
    expect((await recorded()).interceptions).toEqual([{ call: "interceptOutboundHttps", addr: "*" }, { call: "interceptAllOutboundHttp" }]);
    // HTTP(S) is judged from now on, but the running container kept the internet it started with: not in force.
    expect(state.enforced).toBe(false);

    await sandbox.destroy();
    await sandbox.exec("true");
    const after = await recorded();
    expect(after.starts.at(-1)).toEqual({ enableInternet: false });
    // Registered again for the new container, before it started.
    expect(after.interceptions.slice(2)).toEqual([{ call: "interceptOutboundHttps", addr: "*" }, { call: "interceptAllOutboundHttp" }]);
    expect((await sandbox.getNetworkPolicy()).enforced).toBe(true);
  });
});

describe("the outbound handler, reached through ContainerProxy", () => {
  it("lets allowed requests through with the injected credential, refuses others as the local proxy does, and records each", async () => {
    const box = await fresh("cf-judge");
    const { sandbox, send } = box;
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({
      default: "deny",
      rules: [
        { action: "allow", host: "localhost", name: "target-by-name" },
        { action: "deny", host: "localhost", ports: [80], name: "not-on-80" },
        { action: "allow", host: "*.wild.test", name: "wild" },
        { action: "allow", cidr: "127.0.0.1/32", name: "target-net" },
        { action: "deny", host: "blocked.wild.test", name: "no-blocked" },
      ],
      inject: [
        { host: "localhost", bearer: "TARGET_TOKEN", name: "token" },
        { host: "127.0.0.1", headers: { "x-api-key": "{{secrets.MISSING_KEY}}" } },
        { host: "api.wild.test", headers: { "x-token": "{{secrets.TARGET_TOKEN}}" }, name: "wild-token" },
      ],
    });

    // Allowed by name, the sandbox's own credential replaced by the secret's.
    const injected = await send({ url: `http://localhost:${port}/echo?q=1`, method: "POST", headers: { authorization: "Bearer sandbox-made-up" }, body: "hello" });
    expect(injected.status).toBe(200);
    const seen = echoed(injected.body);
    expect(seen).toMatchObject({ method: "POST", path: "/echo?q=1", body: "hello" });
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);

    // Allowed by the address literal's network; its injection names a secret that is not set: no header at all.
    const missing = await send({ url: `http://127.0.0.1:${port}/echo` });
    expect(missing.status).toBe(200);
    expect(echoed(missing.body).headers["x-api-key"]).toBeUndefined();

    // Deny wins over the wildcard that allows; the refusal is the local proxy's, to the byte.
    const denied = await send({ url: "http://blocked.wild.test/x?secret=no" });
    expect(denied.status).toBe(403);
    expect(denied.headers[EGRESS_HEADER]).toBe(refusalHeader("no-blocked"));
    expect(denied.body).toBe(refusalBody({ method: "GET", tls: false, host: "blocked.wild.test", port: 80, path: "/x" }, "denied by the policy", "no-blocked"));

    // `*.wild.test` covers names under it (the handler lets it go out, its credential on: no such host here, so the upstream
    // fails, and the failure says no secret), not the domain itself.
    const wild = await send({ url: "http://api.wild.test/" });
    expect(wild.status).toBe(502);
    expect(wild.headers[EGRESS_HEADER]).toBe(UPSTREAM_FAILED);
    const bare = await send({ url: "http://wild.test/" });
    expect(bare.headers[EGRESS_HEADER]).toBe(refusalHeader("default"));

    // HTTPS comes through the HTTPS interception and is judged alike; a port no rule names is the default's.
    const https = await send({ url: "https://example.test/" });
    expect(https).toMatchObject({ status: 403, headers: { [EGRESS_HEADER]: refusalHeader("default") } });
    // The port is the URL's, or its scheme's: a rule for port 80 holds for a URL that names none.
    const onEighty = await send({ url: "http://localhost/" });
    expect(onEighty.headers[EGRESS_HEADER]).toBe(refusalHeader("not-on-80"));

    // A redirect goes back to the container, which would ask again for where it leads: the Worker never follows it.
    const redirected = await send({ url: `http://localhost:${port}/redirect?to=${encodeURIComponent("http://blocked.wild.test/")}` });
    expect(redirected.status).toBe(302);
    expect(redirected.headers.location).toBe("http://blocked.wild.test/");

    const { entries, next, dropped } = await sandbox.getNetworkAudit();
    expect(dropped).toBe(0);
    expect(next).toBe(entries.at(-1)!.seq);
    const brief = entries.map(({ kind, host, port: p, method, path, status, decision, rule, ip }) => ({ kind, host, port: p, method, path, status, decision, rule, ...(ip ? { ip } : {}) }));
    // Refusals are recorded when judged, let-through requests when their answer ends: order by what each was.
    expect(brief).toEqual(
      expect.arrayContaining([
        { kind: "http", host: "localhost", port, method: "POST", path: "/echo", status: 200, decision: "injected", rule: "target-by-name+token" },
        { kind: "http", host: "127.0.0.1", ip: "127.0.0.1", port, method: "GET", path: "/echo", status: 200, decision: "allowed", rule: "target-net" },
        { kind: "http", host: "blocked.wild.test", port: 80, method: "GET", path: "/x", status: 403, decision: "denied", rule: "no-blocked" },
        { kind: "http", host: "api.wild.test", port: 80, method: "GET", path: "/", status: 502, decision: "injected", rule: "wild+wild-token" },
        { kind: "http", host: "wild.test", port: 80, method: "GET", path: "/", status: 403, decision: "denied", rule: "default" },
        { kind: "https", host: "example.test", port: 443, method: "GET", path: "/", status: 403, decision: "denied", rule: "default" },
        { kind: "http", host: "localhost", port: 80, method: "GET", path: "/", status: 403, decision: "denied", rule: "not-on-80" },
        { kind: "http", host: "localhost", port, method: "GET", path: "/redirect", status: 302, decision: "injected", rule: "target-by-name+token" },
      ]),
    );
    expect(entries).toHaveLength(8);
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const post = entries.find((entry) => entry.method === "POST")!;
    expect(post.bytesOut).toBe(5);
    expect(post.bytesIn).toBe(injected.body.length);
    expect(entries.find((entry) => entry.host === "127.0.0.1")!.reason).toBe("secrets not set: MISSING_KEY");

    // The secret is in no answer of ours: not the audit trail, the policy's state, the secrets' list, a refusal.
    const said = JSON.stringify([entries, await sandbox.getNetworkPolicy(), await sandbox.listSecrets(), denied, wild, https]);
    expect(said).not.toContain(SECRET);
    const overHttp = await apiCall(`/v1/sandboxes/${box.id}/network/audit`);
    expect(await overHttp.text()).not.toContain(SECRET);
  });

  it("judges an address literal by the networks the policy denies", async () => {
    const { sandbox, send } = await fresh("cf-cidr");
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", cidr: "127.0.0.0/8", name: "loopback" }, { action: "deny", cidr: "127.0.0.2/32", name: "no-second" }] });
    const denied = await send({ url: `http://127.0.0.2:${port}/echo` });
    expect(denied.status).toBe(403);
    expect(denied.headers[EGRESS_HEADER]).toBe(refusalHeader("no-second"));
    const v6 = await send({ url: `http://[::ffff:127.0.0.2]:${port}/echo` });
    expect(v6.headers[EGRESS_HEADER]).toBe(refusalHeader("no-second"));
    expect((await send({ url: `http://127.0.0.1:${port}/echo` })).status).toBe(200);
  });

  it("follows the policy and the secrets as they change, through the fetcher registered first: nothing restarts", async () => {
    const { sandbox, send } = await fresh("cf-change");
    await sandbox.setSecret("TARGET_TOKEN", "first-value-1");
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: "localhost" }], inject: [{ host: "localhost", bearer: "TARGET_TOKEN" }] });
    const first = { index: 0 };
    expect(echoed((await send({ url: `http://localhost:${port}/echo` }, first)).body).headers.authorization).toBe("Bearer first-value-1");
    await sandbox.setSecret("TARGET_TOKEN", "second-value-2");
    expect(echoed((await send({ url: `http://localhost:${port}/echo` }, first)).body).headers.authorization).toBe("Bearer second-value-2");
    await sandbox.deleteSecret("TARGET_TOKEN");
    expect(echoed((await send({ url: `http://localhost:${port}/echo` }, first)).body).headers.authorization).toBeUndefined();
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "deny", host: "localhost", name: "now-denied" }] });
    const refused = await send({ url: `http://localhost:${port}/echo` }, first);
    expect(refused.status).toBe(403);
    expect(refused.headers[EGRESS_HEADER]).toBe(refusalHeader("now-denied"));
  });
});

describe("what the platform cannot enforce", () => {
  const refusals: [string, unknown, string][] = [
    ["a TCP-only port allowed", { default: "deny", rules: [{ action: "allow", host: "db.internal", ports: [5432], name: "database" }] }, "database"],
    ["a deny rule that non-HTTP traffic gets around", { default: "allow", rules: [{ action: "deny", host: "evil.example" }] }, "rules[0]"],
    ["DNS", { default: "deny", rules: [{ action: "allow", cidr: "1.1.1.1", ports: [53], name: "resolver" }] }, "resolver"],
    ["a network denied while names pass", { default: "deny", rules: [{ action: "allow", host: "*.example.com" }, { action: "deny", cidr: "10.0.0.0/8", name: "inside" }] }, "inside"],
    ["headers on a port the Worker never sees", { default: "allow", rules: [], inject: [{ host: "api.example.com", ports: [8443], bearer: "X" }] }, "inject[0]"],
  ];
  for (const [what, policy, rule] of refusals) {
    it(`refuses ${what} with 501 NETWORK_POLICY_UNAVAILABLE naming ${rule}, and keeps the policy it had`, async () => {
      const { sandbox, recorded } = await fresh("cf-gap");
      const error = await sandbox.setNetworkPolicy(policy as never).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: "NETWORK_POLICY_UNAVAILABLE", httpStatus: 501, message: expect.stringContaining(`${rule}:`) });
      expect((await sandbox.getNetworkPolicy()).policy).toEqual({ default: "allow", rules: [], inject: [] });
      expect((await recorded()).interceptions).toEqual([]);
    });
  }

  it("answers the same over /v1", async () => {
    const { id } = await fresh("cf-gap-http");
    const response = await apiCall(`/v1/sandboxes/${id}/network/policy`, { method: "PUT", json: refusals[1]![1] });
    expect(response.status).toBe(501);
    expect(await response.json()).toMatchObject({ success: false, code: "NETWORK_POLICY_UNAVAILABLE", context: { rules: [{ rule: "rules[0]" }] } });
  });

  it("takes what it can enforce: open egress with injection, and host rules under deny", async () => {
    const { sandbox } = await fresh("cf-fine");
    expect((await sandbox.setNetworkPolicy({ default: "allow", rules: [], inject: [{ host: "api.example.com", bearer: "X" }] })).missingSecrets).toEqual(["X"]);
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: "*.pypi.org", ports: [443] }, { action: "deny", host: "evil.pypi.org" }] });
    // Networks denied where only networks are allowed: no name can lead into them.
    const byNetwork = await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", cidr: "203.0.113.0/24" }, { action: "deny", cidr: "203.0.113.7" }] });
    expect(byNetwork.policy.rules).toHaveLength(2);
  });
});

describe("WebSocket handshakes through the handler", () => {
  it("are judged and injected like any request, then relayed both ways with their bytes in the trail", async () => {
    const { sandbox, talk } = await fresh("cf-websocket");
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({
      default: "deny",
      rules: [{ action: "allow", host: "localhost", name: "target" }],
      inject: [{ host: "localhost", bearer: "TARGET_TOKEN", name: "token" }],
    });
    const allowed = await talk(`http://localhost:${port}/socket`, { authorization: "Bearer from-the-container" }, ["hello", "again"], 3);
    expect(allowed.status).toBe(101);
    const [greeting, ...echoes] = allowed.received;
    const seen = JSON.parse(greeting!) as { path: string; headers: Record<string, string> };
    expect(seen.path).toBe("/socket");
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(echoes).toEqual(["hello", "again"]);

    const denied = await talk(`http://elsewhere.test:${port}/socket`, {}, ["never"], 1);
    expect(denied).toEqual({ status: 403, received: [] });

    const trail = async () => (await sandbox.getNetworkAudit({ since: 0 })).entries;
    expect(await eventually(async () => (await trail()).some((entry) => entry.status === 101), 5_000, 50)).toBe(true);
    const entries = await trail();
    expect(entries.find((entry) => entry.status === 101)).toMatchObject({ host: "localhost", path: "/socket", decision: "injected", rule: "target+token", bytesOut: 10 });
    expect(entries.find((entry) => entry.status === 101)!.bytesIn).toBe(Buffer.byteLength(greeting!) + 10);
    expect(entries.find((entry) => entry.host === "elsewhere.test")).toMatchObject({ decision: "denied", status: 403 });
    expect(JSON.stringify(entries)).not.toContain(SECRET);
  });
});

describe("the operator's ceiling on Cloudflare (SANDBOX_NETWORK_ALLOWED=0)", () => {
  it("wins over every policy: no internet at start, every request refused and recorded, secrets never filled in", async () => {
    const { id, sandbox } = await fresh("cf-ceiling");
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({ default: "allow", rules: [], inject: [{ host: "localhost", bearer: "TARGET_TOKEN" }] });
    const stub = env.Sandbox.get(env.Sandbox.idFromName(id));
    const seen = await runInDurableObject(stub, async (_instance, state) => {
      const closed = new PlatformEgress(state.storage, new NetworkSettings(state.storage), false);
      const open = new PlatformEgress(state.storage, new NetworkSettings(state.storage), true);
      const policy = { default: "allow" as const, rules: [], inject: [] };
      const judged = await closed.judge({ method: "GET", url: `http://localhost:${port}/echo` });
      return { internet: [closed.internetFor(policy), open.internetFor(policy)], judged, trail: closed.audit.read(0).entries };
    });
    expect(seen.internet).toEqual([false, true]);
    expect(seen.judged).toMatchObject({ allowed: false, status: 403, rule: "operator", reason: "the operator gives no sandbox outbound network" });
    expect(JSON.stringify(seen.judged)).not.toContain(SECRET);
    expect(seen.trail.at(-1)).toMatchObject({ host: "localhost", port, decision: "denied", rule: "operator", status: 403 });
    // Unset or "1" allows; "0" and anything else (a typo) close it.
    expect([undefined, "1", "0", "false", "yes"].map(networkAllowedBy)).toEqual([true, true, false, false, false]);
  });
});

describe("the audit trail on Cloudflare", () => {
  it("streams live over RPC and resumes over /v1 exactly after Last-Event-ID", async () => {
    const { id, sandbox, send } = await fresh("cf-audit-stream");
    await sandbox.setNetworkPolicy({ default: "deny", rules: [] });
    for (const path of ["/a", "/b", "/c"]) await send({ url: `http://nowhere.test${path}` });
    const { entries } = await sandbox.getNetworkAudit({ since: 1 });
    expect(entries.map((entry) => entry.path)).toEqual(["/b", "/c"]);

    const stop = new AbortController();
    const live = sandbox.streamNetworkAudit({ since: 3, signal: stop.signal })[Symbol.asyncIterator]();
    const next = live.next();
    await send({ url: "http://nowhere.test/d" });
    const arrived = (await next).value as AuditEvent;
    stop.abort();
    expect(arrived).toMatchObject({ type: "audit", seq: 4, path: "/d", decision: "denied", rule: "default" });

    const response = await apiCall(`/v1/sandboxes/${id}/network/audit/stream`, { headers: { "last-event-id": "2" } });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const messages: SseMessage[] = [];
    for await (const message of readSseStream(response.body!)) {
      messages.push(message);
      if (messages.length === 2) break;
    }
    expect(messages.map((message) => [message.event, Number(message.id), (JSON.parse(message.data) as { path: string }).path])).toEqual([
      ["audit", 3, "/c"],
      ["audit", 4, "/d"],
    ]);
  });

  it("is a bounded ring in the Durable Object's storage: the oldest go, and a reader learns how many it missed", async () => {
    const stub = env.Sandbox.get(env.Sandbox.idFromName(uniqueId("cf-ring")));
    const pages = await runInDurableObject(stub, (_instance, state) => {
      const ring = new AuditRing(state.storage.sql, 3);
      const empty = ring.read(0);
      for (const path of ["/1", "/2", "/3", "/4", "/5"]) ring.add({ kind: "http", host: "h.test", port: 80, method: "GET", path, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "default" });
      return { empty, fromStart: ring.read(0), fromFour: ring.read(4), atEnd: ring.read(5), paged: ring.read(0, 1) };
    });
    expect(pages.empty).toEqual({ entries: [], next: 0, dropped: 0 });
    expect(pages.fromStart.entries.map((entry) => entry.seq)).toEqual([3, 4, 5]);
    expect(pages.fromStart).toMatchObject({ next: 5, dropped: 2 });
    expect(pages.fromFour).toMatchObject({ next: 5, dropped: 0 });
    expect(pages.fromFour.entries.map((entry) => entry.path)).toEqual(["/5"]);
    expect(pages.atEnd).toEqual({ entries: [], next: 5, dropped: 0 });
    expect(pages.paged).toMatchObject({ next: 3, dropped: 2 });
  });
});
