/**
 * Egress through the Worker's outbound handler (src/sandbox/cloudflare-egress/), the one path a
 * network policy's HTTP and HTTPS take on Cloudflare and locally.
 *
 * Locally, requests come from a real command in the container: through the runtime's egress proxy
 * and workerd's own interception to the handler, which judges, injects and records them (the
 * allowed ones carried out by the runtime, a server on loopback standing for the internet under a
 * test name). The attacks: a denied host, the container's own credential replaced (on a WebSocket
 * handshake too), an address
 * literal in a denied network, a redirect not followed, the host's loopback asked for, the policy
 * and secrets changed while the container runs, the secret searched for in every answer and in the
 * container.
 *
 * What only Cloudflare's path shows: the Durable Object sees a platform-shaped container
 * (platform-container.ts: a real container's lifecycle, without the local runtime's channel) and
 * registers the platform's interception on it, with the internet switch each start gets; the
 * policies the platform cannot take are refused; and requests handed to the very fetcher it
 * registered show the Durable Object's own audit ring (the local trail is the runtime's).
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, inject, it } from "vitest";
import { EGRESS_HEADER, refusalBody, refusalHeader } from "../../protocol/egress-refusal.ts";
import { readSseStream, type SseMessage } from "../../protocol/sse.ts";
import type { AuditEvent } from "../../src/rpc/network.ts";
import { AuditRing } from "../../src/sandbox/cloudflare-egress/audit-ring.ts";
import { networkAllowedBy, PlatformEgress } from "../../src/sandbox/cloudflare-egress/platform-egress.ts";
import { NetworkSettings } from "../../src/sandbox/network.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { WORKER_RULE } from "../../runtime/egress/workerd-egress.ts";
import { EGRESS_TARGET_NAME } from "./egress-target.ts";
import { apiCall, eventually, sandboxPool, uniqueId } from "./helpers.ts";
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

/** A command's curl answer (`-i`): status, headers (lower-cased names), body. */
function curled(stdout: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = "", ...rest] = stdout.split(/\r?\n\r?\n/);
  const [statusLine = "", ...lines] = head.split(/\r?\n/);
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).trim().toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  return { status: Number(/^HTTP\/[\d.]+ (\d+)/.exec(statusLine)?.[1] ?? 0), headers, body: rest.join("\n\n") };
}

/**
 * The same handler, reached as on Cloudflare: a command in a real container sends the request, the
 * runtime's egress proxy offers the connection to workerd's egress listener, workerd's catch-all
 * interception (which the Durable Object registered when the policy was set) hands it to the
 * Worker's `ContainerProxy`, and the handler judges it with the Durable Object. What it lets through
 * the local runtime carries out; EGRESS_TARGET_NAME on port 80 is the stand-in for the internet there.
 * workerd's `interceptAllOutboundHttp` takes port 80 only, and `interceptOutboundHttps("*")` TLS on
 * 443: other ports stay the runtime proxy's (network.test.ts).
 */
describe("the outbound handler, reached from inside a container through workerd's interception", () => {
  const local = sandboxPool();
  afterAll(() => local.destroyAll());
  const at = (path: string) => `http://${EGRESS_TARGET_NAME}${path}`;
  /** Runs curl in the sandbox (`-i`, never following a redirect) and reads its answer. */
  const curl = async (sandbox: SandboxClient, args: string) => {
    const result = await sandbox.exec(`curl -sS -i -m 10 ${args}`);
    return { ...curled(result.stdout), stderr: result.stderr };
  };

  it("lets allowed requests through with the injected credential, refuses others as the proxy does, and records each in the one trail", async () => {
    const sandbox = local.create("handler-judge", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({
      default: "deny",
      rules: [
        { action: "allow", host: EGRESS_TARGET_NAME, name: "target" },
        { action: "allow", host: "*.wild.test", name: "wild" },
        { action: "deny", host: "blocked.wild.test", name: "no-blocked" },
      ],
      inject: [{ host: EGRESS_TARGET_NAME, bearer: "TARGET_TOKEN", name: "token" }],
    });

    // Allowed by name, the container's own credential replaced by the secret's; the body goes through.
    const injected = await curl(sandbox, `-X POST -H 'Authorization: Bearer sandbox-made-up' --data-binary hello '${at("/echo?q=1")}'`);
    expect(injected.status, injected.stderr).toBe(200);
    const seen = echoed(injected.body);
    expect(seen).toMatchObject({ method: "POST", path: "/echo?q=1", body: "hello" });
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);

    // Deny wins over the wildcard that allows: the handler's refusal, the proxy's body to the byte.
    const denied = await curl(sandbox, "'http://blocked.wild.test/x?secret=no'");
    expect(denied.status).toBe(403);
    expect(denied.headers[EGRESS_HEADER]).toBe(refusalHeader("no-blocked"));
    expect(denied.body).toBe(refusalBody({ method: "GET", tls: false, host: "blocked.wild.test", port: 80, path: "/x" }, "denied by the policy", "no-blocked"));
    // A name no rule allows: the default's.
    expect((await curl(sandbox, "http://elsewhere.test/")).headers[EGRESS_HEADER]).toBe(refusalHeader("default"));
    // HTTPS is judged alike (the runtime terminates it with the sandbox's own authority, which the container trusts).
    const https = await curl(sandbox, "https://elsewhere.test/tls");
    expect(https.status, https.stderr).toBe(403);
    expect(https.headers[EGRESS_HEADER]).toBe(refusalHeader("default"));

    // A redirect goes back to the container, which would ask again for where it leads: nothing follows it.
    const redirected = await curl(sandbox, `'${at(`/redirect?to=${encodeURIComponent("http://blocked.wild.test/")}`)}'`);
    expect(redirected.status).toBe(302);
    expect(redirected.headers.location).toBe("http://blocked.wild.test/");

    // One trail: the handler's judgement of each request, beside the runtime's entry for the connection the Worker took.
    const { entries } = await sandbox.getNetworkAudit({ since: 0 });
    const requests = entries.filter((entry) => entry.method !== undefined);
    expect(requests.map(({ kind, host, method, path, status, decision, rule }) => ({ kind, host, method, path, status, decision, rule }))).toEqual([
      { kind: "http", host: EGRESS_TARGET_NAME, method: "POST", path: "/echo", status: 200, decision: "injected", rule: "target+token" },
      { kind: "http", host: "blocked.wild.test", method: "GET", path: "/x", status: 403, decision: "denied", rule: "no-blocked" },
      { kind: "http", host: "elsewhere.test", method: "GET", path: "/", status: 403, decision: "denied", rule: "default" },
      { kind: "https", host: "elsewhere.test", method: "GET", path: "/tls", status: 403, decision: "denied", rule: "default" },
      { kind: "http", host: EGRESS_TARGET_NAME, method: "GET", path: "/redirect", status: 302, decision: "injected", rule: "target+token" },
    ]);
    expect(requests[0]).toMatchObject({ bytesOut: 5, bytesIn: injected.body.length });
    const connections = entries.filter((entry) => entry.rule === WORKER_RULE && entry.method === undefined && entry.kind !== "dns");
    expect(connections).toHaveLength(5);
    // Numbered once, in one sequence.
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => entries[0]!.seq + index));

    // The secret is in no answer of ours: not the trail (over RPC or /v1), the policy's state, the secrets' list, a refusal.
    const said = JSON.stringify([entries, await sandbox.getNetworkPolicy(), await sandbox.listSecrets(), denied, https, redirected]);
    expect(said).not.toContain(SECRET);
    expect(await (await apiCall(`/v1/sandboxes/${sandbox.id}/network/audit`)).text()).not.toContain(SECRET);
  });

  it("puts the secret on the request that leaves, never where the container's commands can read it", async () => {
    const sandbox = local.create("handler-secret", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: EGRESS_TARGET_NAME }], inject: [{ host: EGRESS_TARGET_NAME, bearer: "TARGET_TOKEN" }] });
    // The credential goes out on this request (the target answers bytes, not what it was sent).
    expect((await curl(sandbox, at("/bytes?n=16"))).status).toBe(200);
    // Processes' environments and command lines, the files they may write: the secret in none. The pattern that finds it
    // is not the secret itself (the search's own command line would hold it).
    const pattern = `${SECRET.slice(0, -1)}[${SECRET.slice(-1)}]`;
    const searched = await sandbox.exec(`{ cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rh '${pattern}' /tmp /workspace /home /root /etc; } 2>/dev/null | grep -c '${pattern}'`);
    expect(searched.stdout.trim()).toBe("0");
    expect((await sandbox.getNetworkAudit({ since: 0 })).entries.find((entry) => entry.path === "/bytes")).toMatchObject({ decision: "injected", bytesIn: 16 });
  });

  it("judges a WebSocket handshake and injects it like any request, then carries the socket both ways", async () => {
    const sandbox = local.create("handler-websocket", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setSecret("TARGET_TOKEN", SECRET);
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: EGRESS_TARGET_NAME, name: "target" }], inject: [{ host: EGRESS_TARGET_NAME, bearer: "TARGET_TOKEN", name: "token" }] });
    const client = (url: string) => `
const ws = new WebSocket(${JSON.stringify(url)});
const got = [];
ws.onmessage = (event) => { got.push(String(event.data)); if (got.length === 1) ws.send("hello"); else { console.log(JSON.stringify(got)); ws.close(); } };
ws.onclose = () => { console.log(JSON.stringify({ closed: got.length })); process.exit(0); };
ws.onerror = () => { console.log(JSON.stringify({ error: got.length })); process.exit(0); };
setTimeout(() => { console.log(JSON.stringify({ timeout: got.length })); process.exit(0); }, 8000);`;
    const allowed = await sandbox.exec(`node -e '${client(`ws://${EGRESS_TARGET_NAME}/socket`)}'`);
    expect(allowed.stdout, allowed.stderr).toMatch(/^\[/);
    const [greeting, echo] = JSON.parse(allowed.stdout.trim().split("\n")[0]!) as [string, string];
    const seen = JSON.parse(greeting) as { path: string; headers: Record<string, string> };
    expect(seen.path).toBe("/socket");
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(echo).toBe("hello");
    const denied = await sandbox.exec(`node -e '${client("ws://elsewhere.test/socket")}'`);
    expect(JSON.parse(denied.stdout.trim().split("\n")[0]!)).toEqual({ error: 0 });
    expect(await eventually(async () => (await sandbox.getNetworkAudit({ since: 0 })).entries.some((entry) => entry.status === 101), 5_000, 50)).toBe(true);
    const trail = (await sandbox.getNetworkAudit({ since: 0 })).entries;
    expect(trail.find((entry) => entry.status === 101)).toMatchObject({ host: EGRESS_TARGET_NAME, path: "/socket", decision: "injected", rule: "target+token", bytesOut: 5 });
    expect(trail.find((entry) => entry.host === "elsewhere.test" && entry.method === "GET")).toMatchObject({ decision: "denied", status: 403, rule: "default" });
    expect(JSON.stringify(trail)).not.toContain(SECRET);
  });

  it("judges an address literal by the networks the policy denies, whatever address the container dialed", async () => {
    const sandbox = local.create("handler-cidr", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", cidr: "203.0.113.0/24", name: "net" }, { action: "deny", cidr: "203.0.113.9/32", name: "no-nine" }] });
    // Dialed directly, a denied network is refused at connect by the runtime (the handler never sees it).
    const dialed = await sandbox.exec("curl -sS -m 10 http://203.0.113.9/ ; echo rc=$?");
    expect(dialed.stdout).toMatch(/rc=7/);
    // An allowed address carrying the denied one as its Host: the handler judges the Host's address.
    for (const host of ["203.0.113.9", "203.0.113.9:80"]) {
      const literal = await curl(sandbox, `-H 'Host: ${host}' http://203.0.113.8/x`);
      expect(literal.headers[EGRESS_HEADER], host).toBe(refusalHeader("no-nine"));
    }
  });

  it("never reaches this machine's own loopback for a container, whatever the policy allows", async () => {
    const sandbox = local.create("handler-never", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setNetworkPolicy({ default: "allow", rules: [] });
    // The stand-in for the internet listens on the host's loopback: the handler would reach it with workerd's own fetch.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `127.1.2.3:${port}`]) {
      const asked = await curl(sandbox, `-H 'Host: ${host}' ${at("/echo")}`);
      expect(asked.status, host).toBe(403);
      expect(asked.headers[EGRESS_HEADER], host).toBe(refusalHeader("never"));
      expect(asked.body).not.toContain('"method"');
    }
    // The same server by its test name is reached: the refusal is the address's, not the server's.
    expect((await curl(sandbox, at("/echo"))).status).toBe(200);
    const { entries } = await sandbox.getNetworkAudit({ since: 0 });
    expect(entries.filter((entry) => entry.rule === "never" && entry.kind === "http")).toHaveLength(3);
  });

  it("follows the policy and the secrets as they change, while the container runs", async () => {
    const sandbox = local.create("handler-change", { isolation: "bwrap", allowNetwork: true });
    await sandbox.setSecret("TARGET_TOKEN", "first-value-1");
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "allow", host: EGRESS_TARGET_NAME }], inject: [{ host: EGRESS_TARGET_NAME, bearer: "TARGET_TOKEN" }] });
    const authorization = async () => echoed((await curl(sandbox, at("/echo"))).body).headers.authorization;
    expect(await authorization()).toBe("Bearer first-value-1");
    await sandbox.setSecret("TARGET_TOKEN", "second-value-2");
    expect(await authorization()).toBe("Bearer second-value-2");
    await sandbox.deleteSecret("TARGET_TOKEN");
    expect(await authorization()).toBeUndefined();
    await sandbox.setNetworkPolicy({ default: "deny", rules: [{ action: "deny", host: EGRESS_TARGET_NAME, name: "now-denied" }] });
    const refused = await curl(sandbox, at("/echo"));
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
