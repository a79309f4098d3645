/**
 * `edge-sandbox/ai-sdk` against the shared stack, driven by the AI SDK's own packages: `ai`'s
 * generateText runs a tool in the sandbox through `experimental_sandbox` (a scripted mock model
 * stands in for the LLM), and `@ai-sdk/harness`'s utilities and error classes take the provider and
 * its sessions as the harness does. Files, commands with stdin, ports as plain URLs whose token
 * holds across reconnects, resuming from another provider, network policies, and the errors of bad
 * input in the harness's error shape. Sessions run in containers (bwrap), as in production.
 */
import { describe, expect, it } from "vitest";
import { inject } from "vitest";
import WebSocket from "ws";
import { z } from "zod";
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { HarnessCapabilityUnsupportedError, HarnessError, HarnessSandboxAuthenticationError } from "@ai-sdk/harness";
import { getRestrictedSandboxSession, resolveSandboxDefaultWorkingDirectory, withBridgeToken } from "@ai-sdk/harness/utils";
import { createEdgeSandbox, EdgeSandboxError, type EdgeSandboxProviderSettings, type EdgeSandboxSession } from "../../src/adapters/ai-sdk/index.ts";
import { loopback, previewFetch } from "../preview-fetch.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { uniqueId } from "./helpers.ts";

const settings = (extra: Partial<EdgeSandboxProviderSettings> = {}): EdgeSandboxProviderSettings =>
  ({ url: inject("stackUrl"), token: inject("stackToken"), sandbox: { isolation: "bwrap" }, ...extra }) as EdgeSandboxProviderSettings;

async function withSession<T>(extra: Partial<EdgeSandboxProviderSettings>, use: (session: EdgeSandboxSession) => Promise<T>): Promise<T> {
  const session = await createEdgeSandbox(settings(extra)).createSession({ sessionId: uniqueId("ai") });
  try {
    return await use(session);
  } finally {
    await session.destroy();
  }
}

const text = async (stream: ReadableStream<Uint8Array>) => new TextDecoder().decode(await new Response(stream).arrayBuffer());
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

describe.concurrent("edge-sandbox/ai-sdk", () => {
  it("runs a tool of generateText in the sandbox through experimental_sandbox", async () => {
    await withSession({}, async (session) => {
      const model = new MockLanguageModelV4({
        doGenerate: [
          {
            content: [{ type: "tool-call", toolCallId: "call-1", toolName: "shell", input: JSON.stringify({ command: "echo hi; python3 -c 'print(6*7)'; pwd" }) }],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: [],
          },
          { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
        ] as never,
      });
      const shell = tool({
        description: "Run a shell command in the sandbox",
        inputSchema: z.object({ command: z.string() }),
        execute: async ({ command }, { experimental_sandbox }) => experimental_sandbox!.run({ command }),
      });
      const result = await generateText({ model, tools: { shell }, experimental_sandbox: session.restricted(), stopWhen: isStepCount(3), prompt: "run it" });
      expect(result.text).toBe("done");
      const output = result.steps.flatMap((step) => step.toolResults).map((part) => part.output);
      expect(output).toEqual([{ exitCode: 0, stdout: `hi\n42\n${session.defaultWorkingDirectory}\n`, stderr: "" }]);
    });
  });

  it("reads and writes files, relative to the working directory, with null for what is not there", async () => {
    await withSession({}, async (session) => {
      expect(session.defaultWorkingDirectory).toBe("/workspace");
      expect(await resolveSandboxDefaultWorkingDirectory({ sandboxSession: session })).toBe("/workspace");
      const tools = session.restricted();
      expect(Object.keys(getRestrictedSandboxSession(session)).sort()).toEqual(["deleteFile", "description", "listDirectory", "readBinaryFile", "readFile", "readTextFile", "run", "spawn", "stat", "writeBinaryFile", "writeFile", "writeTextFile"]);

      await tools.writeTextFile({ path: "notes/a.md", content: "one\ntwo\nthree\n" });
      expect(await tools.readTextFile({ path: "/workspace/notes/a.md" })).toBe("one\ntwo\nthree\n");
      expect(await tools.readTextFile({ path: "notes/a.md", startLine: 2, endLine: 9 })).toBe("two\nthree\n");
      const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) % 256);
      await tools.writeBinaryFile({ path: "bin/data", content: bytes });
      expect(await tools.readBinaryFile({ path: "bin/data" })).toEqual(bytes);
      await tools.writeFile({ path: "streamed.txt", content: new Blob(["str", "eamed"]).stream() });
      expect(await text((await tools.readFile({ path: "streamed.txt" }))!)).toBe("streamed");
      await tools.run({ command: "ln -s notes/a.md link.md" });

      expect(await tools.stat({ path: "link.md" })).toEqual({ type: "file", size: 14 });
      expect(await tools.stat({ path: "notes" })).toMatchObject({ type: "directory" });
      expect(await tools.stat({ path: "nope" })).toBeNull();
      expect(await tools.stat({ path: "streamed.txt/inside" })).toBeNull();
      expect((await tools.listDirectory({ path: "." }))!.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
        { name: "bin", type: "directory" },
        { name: "link.md", type: "symlink" },
        { name: "notes", type: "directory" },
        { name: "streamed.txt", type: "file" },
      ]);
      expect(await tools.listDirectory({ path: "nope" })).toBeNull();
      expect(await tools.readFile({ path: "nope.txt" })).toBeNull();
      expect(await tools.readTextFile({ path: "nope.txt" })).toBeNull();

      expect(await tools.deleteFile({ path: "link.md" })).toBe(true);
      expect(await tools.deleteFile({ path: "link.md" })).toBe(false);
      expect(await tools.readTextFile({ path: "notes/a.md" })).toBe("one\ntwo\nthree\n");
      const directory = await Promise.resolve(tools.deleteFile({ path: "notes" })).catch((error: unknown) => error);
      expect(HarnessError.isInstance(directory)).toBe(true);
      expect(directory).toMatchObject({ code: "IS_A_DIRECTORY" });
      const notADirectory = await Promise.resolve(tools.listDirectory({ path: "streamed.txt" })).catch((error: unknown) => error);
      expect(notADirectory).toMatchObject({ code: "NOT_A_DIRECTORY" });
      // Absolute paths are the sandbox's, as the contract has them; only the sandbox's server itself is refused.
      expect(await tools.readTextFile({ path: "/etc/hostname" })).toEqual(expect.any(String));
      const server = await Promise.resolve(tools.readTextFile({ path: "/proc/self/environ" })).catch((error: unknown) => error);
      expect(server).toBeInstanceOf(EdgeSandboxError);
      expect(server).toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
      await expect(tools.writeTextFile({ path: "x.txt", content: "x", encoding: "latin1" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
      // Arguments of the wrong type are refused by the service, as coded harness errors.
      await expect(tools.run({ command: 42 as never })).rejects.toMatchObject({ name: "EdgeSandboxError", code: "INVALID_REQUEST", httpStatus: 400 });
      await expect(session.getPortEndpoint({ port: "3000" as never })).rejects.toMatchObject({ code: "PORT_NOT_EXPOSED" });
    });
  });

  it("spawns processes: separate streams, stdin to EOF, exit codes, kill, abort", async () => {
    await withSession({}, async (session) => {
      const upper = await session.spawn({ command: "tr a-z A-Z; echo done >&2; exit 3", stdin: true });
      expect(upper.pid).toBeGreaterThan(0);
      const writer = upper.stdin.getWriter();
      await writer.write(new TextEncoder().encode("hello "));
      await writer.write(new TextEncoder().encode("world\n"));
      await writer.close();
      const [out, err] = await Promise.all([text(upper.stdout), text(upper.stderr)]);
      expect(out).toBe("HELLO WORLD\n");
      expect(err).toBe("done\n");
      expect(await upper.wait()).toEqual({ exitCode: 3 });

      const bytes = await session.spawn({ command: "printf '\\377\\000\\001'", workingDirectory: "/tmp", env: { X: "1" } });
      expect(new Uint8Array(await new Response(bytes.stdout).arrayBuffer())).toEqual(Uint8Array.of(255, 0, 1));
      expect(await bytes.wait()).toEqual({ exitCode: 0 });
      expect(await session.run({ command: 'pwd; echo "$X"', workingDirectory: "/tmp", env: { X: "set" } })).toEqual({ exitCode: 0, stdout: "/tmp\nset\n", stderr: "" });

      const sleeper = await session.spawn({ command: "sleep 30" });
      await Promise.all([sleeper.kill(), sleeper.kill()]);
      expect((await sleeper.wait()).exitCode).toBe(143);
      await sleeper.kill();

      const controller = new AbortController();
      const aborted = await session.spawn({ command: "sleep 30", abortSignal: controller.signal });
      const reason = new Error("no longer needed");
      controller.abort(reason);
      await expect(aborted.wait()).rejects.toBe(reason);
    });
  });

  it("reaches a port by a plain URL whose token stays the same across reconnects", async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    await withSession({ ports: [port] }, async (session) => {
      expect(session.ports).toEqual([port]);
      expect(session.description).toContain(String(port));
      await session.writeTextFile({ path: "server.cjs", content: PREVIEW_SERVER_SOURCE });
      const server = await session.spawn({ command: `node server.cjs ${port}` });
      const reader = server.stdout.getReader();
      let log = "";
      while (!log.includes("listening")) log += new TextDecoder().decode((await reader.read()).value);

      const endpoint = await session.getPortEndpoint({ port, protocol: "ws" });
      expect(endpoint.headers).toBeUndefined();
      expect(endpoint.url).toMatch(new RegExp(`^ws://${port}-${session.id}\\.localhost:\\d+/\\?token=[^&]+$`));
      expect((await session.getPortEndpoint({ port, protocol: "ws" })).url).toBe(endpoint.url);
      const bridged = withBridgeToken({ endpoint, token: "bridge-secret" });
      for (const attempt of [1, 2]) {
        const socket = new WebSocket(bridged.url, { lookup: loopback as never });
        const echoed = await new Promise<string>((resolve, reject) => {
          socket.once("open", () => socket.send(`hello-${attempt}`));
          socket.once("message", (data) => resolve(data.toString()));
          socket.once("error", reject);
        });
        socket.close();
        expect(echoed).toBe(`echo:hello-${attempt}`);
      }
      const http = await session.getPortEndpoint({ port, protocol: "https" });
      const info = await previewFetch(withBridgeToken({ endpoint: http, token: "bridge-secret" }).url.replace("/?", "/info?"));
      expect(info.status).toBe(200);
      // The server gets the harness's own parameter, never the port's token.
      expect(await info.json()).toMatchObject({ query: "?agent_bridge_token=bridge-secret" });

      const notExposed = await session.getPortEndpoint({ port: port + 1 }).catch((error: unknown) => error);
      expect(HarnessError.isInstance(notExposed)).toBe(true);
      expect(notExposed).toMatchObject({ code: "PORT_NOT_EXPOSED", httpStatus: 404 });
      await session.setPorts([]);
      expect(session.ports).toEqual([]);
      expect((await previewFetch(http.url.replace("/?", "/info?"))).status).toBe(404);
      await server.kill();
    });
  });

  it("resumes a session from another provider, after a stop too, and not after destroy", async () => {
    const sessionId = uniqueId("resume");
    const created = await createEdgeSandbox(settings({ ports: [8123] })).createSession({
      sessionId,
      onFirstCreate: async (session) => session.writeTextFile({ path: "setup.txt", content: "from onFirstCreate" }),
    });
    await created.writeTextFile({ path: "kept.txt", content: "kept" });

    const elsewhere = createEdgeSandbox(settings());
    const resumed = await elsewhere.resumeSession({ sessionId });
    expect(resumed.id).toBe(created.id);
    expect(resumed.ports).toEqual([8123]);
    expect(await resumed.readTextFile({ path: "setup.txt" })).toBe("from onFirstCreate");

    await resumed.stop();
    await resumed.stop();
    const afterStop = await elsewhere.resumeSession({ sessionId });
    expect(await afterStop.readTextFile({ path: "kept.txt" })).toBe("kept");
    // The stop ended the container and its preview URLs: the resumed session has its port exposed again.
    expect(afterStop.ports).toEqual([8123]);
    expect((await afterStop.getPortEndpoint({ port: 8123 })).url).toMatch(/^http:\/\/8123-.*\?token=[^&]+$/);

    await afterStop.destroy();
    await afterStop.destroy();
    const gone = await elsewhere.resumeSession({ sessionId }).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(EdgeSandboxError);
    expect(gone).toMatchObject({ code: "SESSION_NOT_FOUND", httpStatus: 404 });
    await expect(elsewhere.resumeSession({ sessionId: uniqueId("never") })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("maps network policies onto the sandbox's egress: off, open, or allowed hosts and CIDRs with denied CIDRs winning", async () => {
    await withSession({ network: "deny-all" }, async (session) => {
      const reach = async (url: string) => (await session.run({ command: `curl -sS -m 5 -o /dev/null -w '%{http_code}' ${url} 2>&1; echo " exit=$?"` })).stdout;
      // Off: no way out at all.
      expect(await reach("http://192.0.2.7:8080/")).not.toContain("exit=0");
      await session.setNetworkPolicy({ mode: "allow-all" });
      expect((await session.client.getNetworkPolicy()).policy).toEqual({ default: "allow", rules: [], inject: [] });
      await session.setNetworkPolicy({ mode: "custom", allowedHosts: ["*.example.com"], allowedCIDRs: ["198.51.100.0/24"], deniedCIDRs: ["192.0.2.0/24"] });
      // A denied network is refused at connect (curl's 7), not left to the network's silence.
      expect(await reach("http://192.0.2.7:8080/")).toContain("exit=7");
      const state = await session.client.getNetworkPolicy();
      expect(state.enforced).toBe(true);
      expect(state.policy.default).toBe("deny");
      expect(state.policy.rules).toEqual([
        { action: "allow", host: "*.example.com" },
        { action: "allow", cidr: "198.51.100.0/24" },
        { action: "deny", cidr: "192.0.2.0/24" },
      ]);
      await session.setNetworkPolicy({ mode: "deny-all" });
      expect(await reach("http://192.0.2.7:8080/")).not.toContain("exit=0");
    });
  });

  it("turns request transformations into headers the proxy sets from secrets the sandbox never sees", async () => {
    await withSession({ network: "allow-all" }, async (session) => {
      await session.setRequestTransformations([{ match: { host: "api.example.com" }, transform: { headers: { Authorization: "Bearer sk-never-inside-4711" } } }]);
      await session.addRequestTransformations([{ match: { host: "*.models.example" }, transform: { headers: { "X-Api-Key": "key-never-inside-0815" } } }]);
      const { policy } = await session.client.getNetworkPolicy();
      expect(policy.inject).toEqual([
        { host: "api.example.com", headers: { Authorization: "{{secrets.AI_SDK_TRANSFORM_0}}" } },
        { host: "*.models.example", headers: { "X-Api-Key": "{{secrets.AI_SDK_TRANSFORM_1}}" } },
      ]);
      expect((await session.client.listSecrets()).map((secret) => secret.name)).toEqual(["AI_SDK_TRANSFORM_0", "AI_SDK_TRANSFORM_1"]);
      const inside = await session.run({ command: "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'" });
      expect(inside.stdout).not.toContain("never-inside");
      // Set again: the earlier ones are replaced, their secrets deleted.
      await session.setRequestTransformations([{ match: { host: "api.example.com" }, transform: { headers: { Authorization: "Bearer rotated" } } }]);
      expect((await session.client.getNetworkPolicy()).policy.inject).toHaveLength(1);
      expect((await session.client.listSecrets()).map((secret) => secret.name)).toHaveLength(1);
      const refused = await Promise.resolve()
        .then(() => session.setRequestTransformations([{ match: { host: "api.example.com", path: { startsWith: "/v1" } }, transform: { headers: { A: "b" } } }]))
        .catch((error: unknown) => error);
      expect(HarnessCapabilityUnsupportedError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ code: "NOT_SUPPORTED", httpStatus: 501 });
    });
  });

  it("refuses a wrong token, and a port that cannot be exposed, leaving no session behind", async () => {
    const denied = await createEdgeSandbox(settings({ token: "not-the-token" })).createSession().catch((error: unknown) => error);
    expect(HarnessSandboxAuthenticationError.isInstance(denied)).toBe(true);
    expect(denied).toMatchObject({ sandboxProviderId: "edge-sandbox" });

    const sessionId = uniqueId("badport");
    const refused = await createEdgeSandbox(settings({ ports: [80] })).createSession({ sessionId }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EdgeSandboxError);
    expect(refused).toMatchObject({ code: "INVALID_PORT", httpStatus: 400 });
    await expect(createEdgeSandbox(settings()).resumeSession({ sessionId })).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  });
});
