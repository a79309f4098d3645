/**
 * The services on loopback — the local runtime and each container server it starts — answer only
 * with their secret. A command in an unconfined sandbox reaches their ports, but can neither start
 * nor destroy sandboxes nor run commands in another one; under bwrap with the network allowed it does
 * not even reach them (its network is its own, without the host's loopback).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CONTAINER_SERVER_PORT } from "../../protocol/runtime.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { runtimeState, sandboxPool, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const runtimePort = Number(new URL(inject("runtimeUrl")).port);

/** An HTTP request by bash alone (/dev/tcp), as any command could send one; prints the status code. */
function rawRequest(port: number, method: string, path: string, body = ""): string {
  const head = `${method} ${path} HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: ${body.length}\\r\\nConnection: close\\r\\n\\r\\n`;
  return `exec 3<>/dev/tcp/127.0.0.1/${port} && printf '${head}%s' '${body}' >&3 && head -1 <&3 | cut -d' ' -f2`;
}

/** What the raw request prints: the status of the refusal, or nothing when the port is out of reach. */
const REFUSED = "401\n";
const UNREACHABLE = "";

describe.each([
  ["an unconfined sandbox", {}, REFUSED],
  ["a bwrap sandbox with the network allowed", { isolation: "bwrap" as const, allowNetwork: true }, UNREACHABLE],
])("a command in %s", (_label, options, outcome) => {
  let attacker: SandboxClient;
  let victim: SandboxClient;
  let victimPort: number;

  beforeAll(async () => {
    attacker = sandboxes.create("attacker", options);
    victim = sandboxes.create("victim");
    await victim.exec("true");
    victimPort = (await runtimeState(victim.id)).ports![String(CONTAINER_SERVER_PORT)]!;
  });

  it("cannot start a sandbox through the runtime", async () => {
    const key = uniqueId("intruder");
    const body = JSON.stringify({ isolation: { isolation: "none" } });
    const result = await attacker.exec(rawRequest(runtimePort, "POST", `/containers/${key}/start`, body));
    expect(result.stdout).toBe(outcome);
    expect(await runtimeState(key)).toMatchObject({ running: false });
  });

  it("cannot destroy another sandbox through the runtime", async () => {
    const result = await attacker.exec(rawRequest(runtimePort, "DELETE", `/containers/${victim.id}`));
    expect(result.stdout).toBe(outcome);
    expect(await runtimeState(victim.id)).toMatchObject({ running: true });
  });

  it("cannot run a command through another sandbox's container server", async () => {
    const result = await attacker.exec(rawRequest(victimPort, "POST", "/api/execute", '{"command":"touch pwned"}'));
    expect(result.stdout).toBe(outcome);
    expect((await victim.exists("pwned")).exists).toBe(false);
  });
});
