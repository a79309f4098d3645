/**
 * Egress through the whole chain: a sandbox's network policy and secrets go in over RPC and /v1, are
 * kept by the Durable Object, reach the local runtime's proxy at once, and are enforced on a running
 * sandbox; secrets are write-only (no answer carries a value); the audit trail says what was refused
 * and by which rule. Bad input and unknown names answer with their codes.
 */
import { afterAll, describe, expect, it } from "vitest";
import { SandboxError } from "../../src/rpc/errors.ts";
import { readSseStream, type SseMessage } from "../../protocol/sse.ts";
import type { AuditEvent } from "../../src/rpc/network.ts";
import { apiCall, eventually, sandboxPool } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

describe("network policy", () => {
  it("is kept, named in full when read back, and reports the secrets it lacks", async () => {
    const sandbox = sandboxes.create("net-policy", { isolation: "bwrap", allowNetwork: true });
    // Not running yet: nothing is enforced until its container is.
    expect(await sandbox.getNetworkPolicy()).toEqual({ policy: { default: "allow", rules: [], inject: [] }, enforced: false, missingSecrets: [] });
    await sandbox.exec("true");
    expect((await sandbox.getNetworkPolicy()).enforced).toBe(true);
    const state = await sandbox.setNetworkPolicy({
      default: "deny",
      rules: [{ action: "allow", host: "*.example.com", ports: [443] }],
      inject: [{ host: "api.example.com", bearer: "EXAMPLE_TOKEN" }],
    });
    expect(state).toEqual({
      policy: { default: "deny", rules: [{ action: "allow", host: "*.example.com", ports: [443] }], inject: [{ host: "api.example.com", bearer: "EXAMPLE_TOKEN" }] },
      enforced: true,
      missingSecrets: ["EXAMPLE_TOKEN"],
    });
    await sandbox.setSecret("EXAMPLE_TOKEN", "s3cr3t-value");
    expect((await sandbox.getNetworkPolicy()).missingSecrets).toEqual([]);
  });

  it("refuses a malformed policy with INVALID_REQUEST and keeps the one it had", async () => {
    const sandbox = sandboxes.create("net-bad");
    for (const policy of [{ default: "maybe" }, { default: "deny", rules: [{ action: "allow", host: "a.com", cidr: "10.0.0.0/8" }] }, { default: "deny", rules: [{ action: "allow", cidr: "10.0.0.0/33" }] }]) {
      await expect(sandbox.setNetworkPolicy(policy as never)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    }
    expect((await sandbox.getNetworkPolicy()).policy.default).toBe("allow");
  });

  it("takes effect on a running sandbox at once: a denied destination fails inside and shows in the audit trail with its rule", async () => {
    const sandbox = sandboxes.create("net-enforced", { isolation: "bwrap", allowNetwork: true });
    // Something running before the change, as an agent's long task would be.
    await sandbox.exec("true");
    await sandbox.setNetworkPolicy({
      default: "allow",
      rules: [
        { action: "deny", cidr: "192.0.2.0/24", name: "no-test-net" },
        { action: "deny", host: "blocked.example", name: "no-blocked" },
      ],
    });
    // A denied address is refused at connect, HTTP or not.
    const refused = await sandbox.exec("exec 3<>/dev/tcp/192.0.2.7/8080");
    expect(refused).toMatchObject({ exitCode: 1, stderr: expect.stringContaining("Connection refused") });
    // A request for a denied host is answered by the proxy itself, with 403 and the rule's name.
    const denied = await sandbox.exec("curl -sS -m 5 -w ' status=%{http_code}' -H 'Host: blocked.example' http://198.51.100.7:8080/");
    expect(denied.stdout).toContain("status=403");
    expect(denied.stdout).toContain("no-blocked");
    const audited = await eventually(async () => {
      const page = await sandbox.getNetworkAudit({});
      const denials = page.entries.filter((entry) => entry.decision === "denied");
      return (
        denials.some((entry) => entry.kind === "tcp" && entry.ip === "192.0.2.7" && entry.port === 8080 && entry.rule === "no-test-net") &&
        denials.some((entry) => entry.kind === "http" && entry.host === "blocked.example" && entry.rule === "no-blocked")
      );
    }, 10_000);
    expect(audited).toBe(true);
    const page = await sandbox.getNetworkAudit({});
    expect(page.next).toBeGreaterThanOrEqual(page.entries.at(-1)!.seq);
    expect((await sandbox.getNetworkAudit({ since: page.next })).entries).toEqual([]);
  });

  it("is not enforced where the sandbox shares the host's network (the local runtime's none mode)", async () => {
    const sandbox = sandboxes.create("net-plain", { isolation: "none", allowNetwork: true });
    await sandbox.exec("true");
    expect((await sandbox.getNetworkPolicy()).enforced).toBe(false);
  });
});

describe("the audit trail as a stream", () => {
  /** The first `count` SSE messages of a /v1 answer (then the stream is let go). */
  async function firstMessages(response: Response, count: number): Promise<SseMessage[]> {
    const messages: SseMessage[] = [];
    for await (const message of readSseStream(response.body!)) {
      messages.push(message);
      if (messages.length === count) break;
    }
    return messages;
  }

  it("follows entries live over RPC, and resumes over /v1 exactly after Last-Event-ID or ?since=", async () => {
    const sandbox = sandboxes.create("net-audit-stream", { isolation: "bwrap", allowNetwork: true });
    await sandbox.exec("true");
    await sandbox.setNetworkPolicy({ default: "allow", rules: [{ action: "deny", cidr: "192.0.2.0/24", name: "no-test-net" }] });
    await sandbox.exec("for port in 1 2 3; do (exec 3<>/dev/tcp/192.0.2.1/$port) 2>/dev/null; done; true");
    expect(await eventually(async () => (await sandbox.getNetworkAudit({})).entries.length >= 3, 10_000)).toBe(true);
    const { entries } = await sandbox.getNetworkAudit({});

    // Live: the stream starts after the last entry, and the next refusal arrives as it happens.
    const stop = new AbortController();
    const live = sandbox.streamNetworkAudit({ since: entries.at(-1)!.seq, signal: stop.signal })[Symbol.asyncIterator]();
    const next = live.next();
    await sandbox.exec("(exec 3<>/dev/tcp/192.0.2.1/4) 2>/dev/null; true");
    const arrived = (await next).value as AuditEvent;
    stop.abort();
    expect(arrived).toMatchObject({ type: "audit", seq: entries.at(-1)!.seq + 1, kind: "tcp", ip: "192.0.2.1", port: 4, decision: "denied", rule: "no-test-net" });

    // Over /v1: each entry an `audit` event whose id is its seq, from exactly after the point asked.
    const path = `/v1/sandboxes/${sandbox.id}/network/audit/stream`;
    const fromHeader = await apiCall(path, { headers: { "last-event-id": String(entries[0]!.seq) } });
    expect(fromHeader.status).toBe(200);
    expect(fromHeader.headers.get("content-type")).toContain("text/event-stream");
    const afterFirst = await firstMessages(fromHeader, 2);
    expect(afterFirst.map((message) => [message.event, Number(message.id)])).toEqual([
      ["audit", entries[1]!.seq],
      ["audit", entries[2]!.seq],
    ]);
    expect(JSON.parse(afterFirst[0]!.data)).toEqual({ type: "audit", ...entries[1] });
    const fromQuery = await firstMessages(await apiCall(`${path}?since=${entries[1]!.seq}`), 1);
    expect(Number(fromQuery[0]!.id)).toBe(entries[2]!.seq);

    const bad = await apiCall(path, { headers: { "last-event-id": "not-a-number" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("INVALID_REQUEST");
  });
});

describe("secrets", () => {
  it("are write-only: listed by name, never read back over RPC or /v1", async () => {
    const sandbox = sandboxes.create("net-secrets");
    const id = sandbox.id;
    const set = await sandbox.setSecret("API_KEY", "never-shown-4711");
    expect(set).toEqual({ name: "API_KEY", updatedAt: expect.any(String) });
    expect(await sandbox.listSecrets()).toEqual([{ name: "API_KEY", updatedAt: set.updatedAt }]);
    const listed = await apiCall(`/v1/sandboxes/${id}/network/secrets`);
    const text = await listed.text();
    expect(listed.status).toBe(200);
    expect(text).toContain("API_KEY");
    expect(text).not.toContain("never-shown-4711");
    const put = await apiCall(`/v1/sandboxes/${id}/network/secrets/OTHER`, { method: "PUT", json: { value: "also-hidden-0815" } });
    expect(put.status).toBe(200);
    expect(await put.text()).not.toContain("also-hidden-0815");
    expect(await sandbox.deleteSecret("API_KEY")).toEqual({ name: "API_KEY", deleted: true });
    const gone = await sandbox.deleteSecret("API_KEY").catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(SandboxError);
    expect(gone).toMatchObject({ code: "SECRET_NOT_FOUND", httpStatus: 404 });
    const badName = await apiCall(`/v1/sandboxes/${id}/network/secrets/1-bad`, { method: "PUT", json: { value: "x" } });
    expect(badName.status).toBe(400);
    expect(((await badName.json()) as { code: string }).code).toBe("INVALID_REQUEST");
    const badValue = await apiCall(`/v1/sandboxes/${id}/network/secrets/OK`, { method: "PUT", json: { value: "line\r\nInjected: yes" } });
    expect(badValue.status).toBe(400);
  });
});
