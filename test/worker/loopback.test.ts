/**
 * The services on loopback — the local runtime and each container server it starts — answer only
 * with their secret. A command in a sandbox, unconfined or under bwrap with the network allowed,
 * reaches their ports, but can neither start nor destroy sandboxes nor run commands in another one.
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

describe.each([
  ["an unconfined sandbox", {}],
  ["a bwrap sandbox with the network allowed", { isolation: "bwrap" as const, allowNetwork: true }],
])("a command in %s", (_label, options) => {
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
    expect(result.stdout).toBe("401\n");
    expect(await runtimeState(key)).toMatchObject({ running: false });
  });

  it("cannot destroy another sandbox through the runtime", async () => {
    const result = await attacker.exec(rawRequest(runtimePort, "DELETE", `/containers/${victim.id}`));
    expect(result.stdout).toBe("401\n");
    expect(await runtimeState(victim.id)).toMatchObject({ running: true });
  });

  it("cannot run a command through another sandbox's container server", async () => {
    const result = await attacker.exec(rawRequest(victimPort, "POST", "/api/execute", '{"command":"touch pwned"}'));
    expect(result.stdout).toBe("401\n");
    expect((await victim.exists("pwned")).exists).toBe(false);
  });
});
