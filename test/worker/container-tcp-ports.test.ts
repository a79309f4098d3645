/**
 * `ctx.container.getTcpPort(port)` on a port other than the container server's, locally: workerd's
 * own container client opens it through the engine's sidecar, which reaches a server listening
 * inside the sandbox's network. A real server in a real container, fetched from inside the Durable
 * Object as an app's own code would (a posted body and a streamed answer included); a port nothing
 * listens on is refused as workerd refuses one.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { sandboxPool } from "./helpers.ts";

const pool = sandboxPool();
afterAll(pool.destroyAll);

async function startServer(sandbox: SandboxClient): Promise<number> {
  await sandbox.writeFile("tcp-port-server.cjs", PREVIEW_SERVER_SOURCE);
  const process = await sandbox.startProcess("exec node tcp-port-server.cjs 0");
  const { match } = await process.waitForLog(/listening (\d+)/, 15_000);
  return Number((match as RegExpMatchArray)[1]);
}

const stubOf = (sandbox: SandboxClient) => env.Sandbox.get(env.Sandbox.idFromName(sandbox.id));

describe("getTcpPort on a port of the sandbox's own server", () => {
  it("reaches the server inside the sandbox through workerd's container client", async () => {
    const sandbox = pool.create("tcp-port");
    const port = await startServer(sandbox);
    expect(port).not.toBe(3000);
    const seen = await runInDurableObject(stubOf(sandbox), async (_instance, state) => {
      const tcp = state.container!.getTcpPort(port);
      const info = await tcp.fetch("http://container/info?from=durable-object", { headers: { "x-probe": "through-get-tcp-port" } });
      const posted = await tcp.fetch("http://container/echo", { method: "POST", body: "a body both ways" });
      const drip = await tcp.fetch("http://container/drip?n=3&ms=20");
      return { status: info.status, info: (await info.json()) as { path: string; query: string; headers: Record<string, string> }, echo: await posted.text(), drip: await drip.text() };
    });
    expect(seen.status).toBe(200);
    expect(seen.info).toMatchObject({ path: "/info", headers: { "x-probe": "through-get-tcp-port" } });
    expect(seen.info.query).toBe("?from=durable-object");
    expect(seen.echo).toBe("a body both ways");
    expect(seen.drip.split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("refuses a port nothing listens on, as workerd reports one", async () => {
    const sandbox = pool.create("tcp-port-closed");
    await sandbox.exec("true"); // the container runs
    const refused = await runInDurableObject(stubOf(sandbox), async (_instance, state) => {
      try {
        await state.container!.getTcpPort(8089).fetch("http://container/");
        return "answered";
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(refused).toContain("not listening");
  });
});
