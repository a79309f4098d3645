/**
 * The AI SDK adapter inside a Worker: a harness-sandbox-v1 provider on the Durable Object binding
 * (`{ binding: env.Sandbox }`) in workerd, on the calls a harness makes: create, commands, files, a
 * spawned process with stdin, a port's URL (on the preview domain these tests run with), resume and
 * destroy.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { HarnessError } from "@ai-sdk/harness";
import { createEdgeSandbox } from "../../src/adapters/ai-sdk/index.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const text = async (stream: ReadableStream<Uint8Array>) => new TextDecoder().decode(await new Response(stream).arrayBuffer());

describe("edge-sandbox/ai-sdk over the binding", () => {
  it("creates, runs, moves files, spawns with stdin, reaches a port, resumes and destroys", async () => {
    const sandbox = createEdgeSandbox({ binding: env.Sandbox, idPrefix: "bound" });
    const sessionId = uniqueId("ai");
    const session = await sandbox.createSession({ sessionId });
    try {
      expect(session.id).toBe(`bound-${sessionId}`);
      expect(await session.run({ command: "echo in-worker; pwd" })).toEqual({ exitCode: 0, stdout: `in-worker\n${session.defaultWorkingDirectory}\n`, stderr: "" });
      await session.writeTextFile({ path: "dir/a.txt", content: "héllo" });
      expect(await session.readTextFile({ path: "dir/a.txt" })).toBe("héllo");

      const cat = await session.spawn({ command: "cat", stdin: true });
      const writer = cat.stdin.getWriter();
      await writer.write(new TextEncoder().encode("through stdin"));
      await writer.close();
      expect(await text(cat.stdout)).toBe("through stdin");
      expect(await cat.wait()).toEqual({ exitCode: 0 });

      await session.writeTextFile({ path: "server.cjs", content: PREVIEW_SERVER_SOURCE });
      const server = await session.spawn({ command: "node server.cjs 0" });
      const reader = server.stdout.getReader();
      let log = "";
      while (!/listening (\d+)/.test(log)) log += new TextDecoder().decode((await reader.read()).value);
      const port = Number(/listening (\d+)/.exec(log)![1]);
      await session.setPorts([port]);
      const { url } = await session.getPortEndpoint({ port, protocol: "https" });
      expect(url).toMatch(new RegExp(`^https?://${port}-${session.id}\\.preview\\.test/\\?token=`));
      const page = await worker.fetch(new Request(url.replace("/?", "/info?")));
      expect(page.status).toBe(200);
      expect(await page.json()).toMatchObject({ path: "/info" });
      await server.kill();

      const resumed = await createEdgeSandbox({ binding: env.Sandbox, idPrefix: "bound" }).resumeSession({ sessionId });
      expect(resumed.ports).toEqual([port]);
      expect(await resumed.readTextFile({ path: "dir/a.txt" })).toBe("héllo");
    } finally {
      await session.destroy();
    }
    const gone = await sandbox.resumeSession({ sessionId }).catch((error: unknown) => error);
    expect(HarnessError.isInstance(gone)).toBe(true);
    expect(gone).toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});
