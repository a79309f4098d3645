/**
 * The OpenAI Agents SDK on this service, driven by the SDK's own published packages: its Cloudflare
 * sandbox client (`@openai/agents-extensions/sandbox/cloudflare`), unchanged, pointed at our Worker's
 * Bridge API, and our `edge-sandbox/openai-agents` client, which adds exposed ports. Commands with
 * and without a TTY, stdin to a running command, files, a manifest, persisting a workspace and
 * restoring it into another sandbox, mounts (refused in the SDK's own error classes), ports, and the
 * errors of bad input. The SDK's client names `/workspace` by its absolute path, so these run on a
 * stack of their own whose sandboxes are containers (own-stack.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { CloudflareBucketMountStrategy, CloudflareSandboxClient, type CloudflareSandboxSession } from "@openai/agents-extensions/sandbox/cloudflare";
import {
  dir,
  file,
  Manifest,
  s3Mount,
  SandboxExposedPortUnavailableError,
  SandboxMountError,
  SandboxProviderError,
  SandboxUnsupportedFeatureError,
  SandboxWorkspaceReadNotFoundError,
  urlForExposedPort,
} from "@openai/agents-core/sandbox";
import { run, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents-core";
import { SandboxAgent, shell } from "@openai/agents-core/sandbox";
import { EdgeSandboxClient } from "../../src/adapters/openai-agents/index.ts";
import { loopback, previewFetch } from "../preview-fetch.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import { startOwnStack, type OwnStack } from "./own-stack.ts";

let stack: OwnStack;
const sessions: CloudflareSandboxSession[] = [];

beforeAll(async () => {
  stack = await startOwnStack("openai-agents");
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(sessions.map((session) => session.close()));
  await stack?.stop();
}, 60_000);

/** A tool call a scripted turn makes. */
interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * A model that follows a script instead of thinking: each turn answers with the tool calls the script
 * gives for it (it sees the tool results of the turn before), or, once the script has none, a final
 * message. It keeps what it was asked, so a test sees what the agent handed back. It stands in for an
 * LLM, which these machines cannot reach.
 */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  readonly #script: (turn: number, results: string[]) => ScriptedCall[] | undefined;

  constructor(script: (turn: number, results: string[]) => ScriptedCall[] | undefined) {
    this.#script = script;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const calls = this.#script(this.requests.length, toolResults(request));
    const output: AgentInputItem[] = calls
      ? calls.map((call, i) => ({ type: "function_call", callId: `call-${this.requests.length}-${i}`, name: call.name, arguments: JSON.stringify(call.arguments), status: "completed" }))
      : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "all done" }] }];
    return { usage: new Usage(), output: output as ModelResponse["output"] };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

/** The tool results in a request to the model, as text, newest last. */
function toolResults(request: ModelRequest): string[] {
  const input = Array.isArray(request.input) ? request.input : [];
  return input
    .filter((item) => (item as { type?: string }).type === "function_call_result")
    .map((item) => {
      const output = (item as { output: unknown }).output;
      return typeof output === "string" ? output : typeof (output as { text?: unknown }).text === "string" ? (output as { text: string }).text : JSON.stringify(output);
    });
}

const sdkClient = (options: Record<string, unknown> = {}) => new CloudflareSandboxClient({ workerUrl: stack.url, apiKey: stack.token, ...options });

async function track<T extends CloudflareSandboxSession>(session: Promise<T>): Promise<T> {
  const made = await session;
  sessions.push(made);
  return made;
}

/** The output part of an exec answer (after its `Output:` line). */
const outputOf = (answer: string) => answer.slice(answer.indexOf("Output:\n") + "Output:\n".length);
const sessionIdOf = (answer: string) => Number(/Process running with session ID (\d+)/.exec(answer)?.[1]);

describe.concurrent("the SDK's own Cloudflare client against our Worker", () => {
  it("applies a manifest, runs commands, reads and writes files", async () => {
    const manifest = new Manifest({
      root: "/workspace",
      entries: {
        "README.md": file({ content: "# héllo\n" }),
        src: dir({ children: { "main.py": file({ content: "print(6 * 7)\n" }) } }),
      },
      environment: { GREETING: "it's me" },
    });
    const session = await track(sdkClient().create(manifest));
    expect(session.state.sandboxId).toMatch(/^[a-z2-7]{26}$/);

    const ran = await session.execCommand({ cmd: 'pwd; cat README.md; python3 src/main.py; echo "$GREETING"; echo oops >&2; exit 3' });
    expect(ran).toContain("Process exited with code 3");
    expect(outputOf(ran)).toBe("/workspace\n# héllo\n42\nit's me\noops");
    expect(await session.execCommand({ cmd: "pwd", workdir: "src" })).toContain("/workspace/src");

    // A manifest entry added later writes bytes as they are, parent folders made on the way.
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    await session.materializeEntry({ path: "bin/data.bin", entry: file({ content: bytes }) });
    expect(await session.readFile({ path: "bin/data.bin" })).toEqual(bytes);
    expect(await session.readFile({ path: "README.md", maxBytes: 3 })).toEqual(new TextEncoder().encode("# h"));
    expect(await session.pathExists("src/main.py")).toBe(true);
    expect(await session.directoryExists("src")).toBe(true);
    expect(await session.pathExists("nothing-here")).toBe(false);
    await expect(session.readFile({ path: "missing.txt" })).rejects.toBeInstanceOf(SandboxWorkspaceReadNotFoundError);
    expect(await session.running()).toBe(true);
  });

  it("runs a command on a terminal, and writes to its stdin while it runs", async () => {
    const session = await track(sdkClient().create(new Manifest({ root: "/workspace" })));
    expect(session.supportsPty()).toBe(true);
    // The command waits for its line, so it is still running whatever the yield; its output may come
    // in later polls on a busy machine.
    const started = await session.execCommand({ cmd: 'tty; read line; echo "got-$line"', tty: true, yieldTimeMs: 1_500 });
    const sessionId = sessionIdOf(started);
    expect(sessionId).toBeGreaterThan(0);
    let before = outputOf(started);
    for (let i = 0; i < 30 && !/\/dev\/pts\/\d+/.test(before); i++) before += await session.writeStdin({ sessionId, yieldTimeMs: 1_000 });
    expect(before).toMatch(/\/dev\/pts\/\d+/);
    let answer = await session.writeStdin({ sessionId, chars: "hello\n", yieldTimeMs: 1_500 });
    for (let i = 0; i < 30 && !answer.includes("got-hello"); i++) answer += await session.writeStdin({ sessionId, yieldTimeMs: 1_000 });
    expect(answer).toContain("got-hello");
    await session.close();
  });

  it("persists a workspace as a tar and restores it into another sandbox, leaving the manifest's ephemeral paths out", async () => {
    const manifest = new Manifest({ root: "/workspace", entries: { "keep.txt": file({ content: "kept\n" }), "tmp.txt": file({ content: "gone\n", ephemeral: true }) } });
    const from = await track(sdkClient().create(manifest));
    await from.execCommand({ cmd: "mkdir -p deep/er && echo nested > deep/er/n.txt && ln -s keep.txt link" });
    const archive = await from.persistWorkspace();
    expect(new TextDecoder().decode(archive.subarray(257, 262))).toBe("ustar");

    const to = await track(sdkClient().create(new Manifest({ root: "/workspace" })));
    await to.hydrateWorkspace(archive);
    expect(outputOf(await to.execCommand({ cmd: "cat keep.txt deep/er/n.txt; readlink link; test -e tmp.txt && echo tmp-there || echo no-tmp" }))).toBe("kept\nnested\nkeep.txt\nno-tmp");
  });

  it("answers mounts with the SDK's error classes: bucket mounts are not available here", async () => {
    const mounted = new Manifest({
      root: "/workspace",
      entries: { data: s3Mount({ bucket: "b", mountStrategy: new CloudflareBucketMountStrategy() }) },
    });
    const refused = await sdkClient().create(mounted).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxMountError);
    expect((refused as SandboxMountError).details).toMatchObject({ status: 501, reason: expect.stringContaining("not available") });

    const withOption = await sdkClient({ mounts: [{ bucket: "b", mountPath: "/workspace/data" }] }).create(new Manifest({ root: "/workspace" })).catch((error: unknown) => error);
    expect(withOption).toBeInstanceOf(SandboxProviderError);
    expect((withOption as Error).message).toMatch(/not_implemented: Mounting a bucket is not available/);

    const session = await track(sdkClient().create(new Manifest({ root: "/workspace" })));
    await expect(session.unmountBucket("/workspace/data")).rejects.toBeInstanceOf(SandboxMountError);
    // The SDK's own client cannot resolve ports against Cloudflare's bridge: it says so itself.
    await expect(sdkClient({ exposedPorts: [8080] }).create(new Manifest({ root: "/workspace" })).then((s) => (sessions.push(s), s.resolveExposedPort(8080)))).rejects.toBeInstanceOf(
      SandboxUnsupportedFeatureError,
    );
  });
});

describe.concurrent("a sandbox agent's tools", () => {
  it("run in our sandbox: the agent's manifest is applied, exec_command runs with and without a TTY, write_stdin feeds it", async () => {
    const sessionIdIn = (text: string | undefined) => Number(/Process running with session ID (\d+)/.exec(text ?? "")?.[1]);
    const model = new ScriptedModel((turn, results) => {
      if (turn === 1) return [{ name: "exec_command", arguments: { cmd: "cat task.md; echo from-$((6*7)); uname -s" } }];
      if (turn === 2) return [{ name: "exec_command", arguments: { cmd: 'read answer; echo "answer=$answer"', tty: true, yield_time_ms: 1500 } }];
      if (turn === 3) return [{ name: "write_stdin", arguments: { session_id: sessionIdIn(results.at(-1)), chars: "forty-two\n", yield_time_ms: 3000 } }];
      return undefined;
    });
    const agent = new SandboxAgent({
      name: "builder",
      instructions: "Do the task in task.md.",
      model,
      capabilities: [shell()],
      defaultManifest: { root: "/workspace", entries: { "task.md": file({ content: "the task\n" }) } },
    });
    const client = new EdgeSandboxClient({ url: stack.url, token: stack.token });
    const first = await run(agent, "start", { sandbox: { client }, maxTurns: 5 });
    expect(first.finalOutput).toBe("all done");
    const [plain, tty, stdin] = model.requests.slice(1).map((request) => toolResults(request).at(-1) ?? "");
    expect(plain).toContain("Process exited with code 0");
    expect(plain).toContain("the task\nfrom-42\nLinux");
    expect(sessionIdIn(tty)).toBeGreaterThan(0);
    expect(stdin).toContain("answer=forty-two");
    // The tools are the SDK's: the tool list the model saw.
    expect(model.requests[0]!.tools.map((t) => t.name).sort()).toEqual(["exec_command", "write_stdin"]);
  });
});

describe.concurrent("edge-sandbox/openai-agents", () => {
  it("resolves an exposed port to an endpoint whose HTTP and WebSocket URLs reach a server in the sandbox", async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const client = new EdgeSandboxClient({ url: stack.url, token: stack.token, exposedPorts: [port] });
    const session = await track(client.create(new Manifest({ root: "/workspace", entries: { "server.cjs": file({ content: PREVIEW_SERVER_SOURCE }) } })));
    // On a terminal the server outlives the call that started it.
    const started = await session.execCommand({ cmd: `node server.cjs ${port}`, tty: true, yieldTimeMs: 3_000 });
    expect(started).toContain(`listening ${port}`);

    const endpoint = await session.resolveExposedPort(port);
    expect(endpoint).toMatchObject({ host: `${port}-${session.state.sandboxId}.localhost`, port: Number(new URL(stack.url).port), tls: false, query: expect.stringMatching(/^token=/) });
    const page = await previewFetch(urlForExposedPort(endpoint, "http").replace("/?", "/info?"));
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ method: "GET", path: "/info" });

    const socket = new WebSocket(urlForExposedPort(endpoint, "ws"), { lookup: loopback as never });
    const echoed = await new Promise<string>((resolve, reject) => {
      socket.once("open", () => socket.send("ping-over-preview"));
      socket.once("message", (data) => resolve(data.toString()));
      socket.once("error", reject);
    });
    socket.close();
    expect(echoed).toBe("echo:ping-over-preview");
    // Asked again, the same endpoint (recorded in the session's state).
    expect(await session.resolveExposedPort(port)).toEqual(endpoint);
    // Unexposed on the service, a configured port is exposed again on the way, with a new token.
    const unexposed = await fetch(`${stack.url}/v1/sandbox/${session.state.sandboxId}/tunnel/${port}`, { method: "DELETE", headers: { authorization: `Bearer ${stack.token}` } });
    expect(unexposed.status).toBe(204);
    const resumed = await client.resume(session.state);
    delete (resumed.state.exposedPorts as Record<string, unknown> | undefined)?.[String(port)];
    const again = await resumed.resolveExposedPort(port);
    expect(again.host).toBe(endpoint.host);
    expect(again.query).not.toBe(endpoint.query);
    expect((await previewFetch(urlForExposedPort(again, "http").replace("/?", "/info?"))).status).toBe(200);
  });

  it("runs each TTY command on a terminal of its own: only its own output, its exit code, stdin, side by side", async () => {
    const client = new EdgeSandboxClient({ url: stack.url, token: stack.token });
    const session = await track(client.create(new Manifest({ root: "/workspace", environment: { WHO: "tty" } })));
    const ended = await session.execCommand({ cmd: 'tty; echo "hi $WHO from $(pwd)"; exit 7', tty: true });
    expect(ended).toContain("Process exited with code 7");
    expect(outputOf(ended)).toMatch(/^\/dev\/pts\/\d+\r\nhi tty from \/workspace\r\n$/);

    const [first, second] = await Promise.all(
      ["first", "second"].map((name) => session.execCommand({ cmd: `read line; echo "${name}:$line"`, tty: true, yieldTimeMs: 500 })),
    );
    const firstId = sessionIdOf(first!);
    const secondId = sessionIdOf(second!);
    expect(firstId).toBeGreaterThan(0);
    expect(secondId).not.toBe(firstId);
    const secondAnswer = await session.writeStdin({ sessionId: secondId, chars: "two\n", yieldTimeMs: 5_000 });
    expect(secondAnswer).toContain("Process exited with code 0");
    expect(outputOf(secondAnswer)).toContain("second:two");
    expect(outputOf(secondAnswer)).not.toContain("first");
    // A later command's answer holds none of what earlier ones printed.
    const later = await session.execCommand({ cmd: "echo later", tty: true });
    expect(outputOf(later)).toBe("later\r\n");
    const firstAnswer = await session.writeStdin({ sessionId: firstId, chars: "one\n", yieldTimeMs: 5_000 });
    expect(outputOf(firstAnswer)).toContain("first:one");
    expect(firstAnswer).toContain("Process exited with code 0");
    // Its session is over: writing to it again is the SDK's answer for an unknown session.
    expect(await session.writeStdin({ sessionId: firstId, chars: "x" })).toContain(`session not found: ${firstId}`);

    const waiting = sessionIdOf(await session.execCommand({ cmd: "sleep 60", tty: true, yieldTimeMs: 250 }));
    expect(waiting).toBeGreaterThan(0);
    await session.close();
    const terminals = (await (await fetch(`${stack.url}/v1/sandboxes/${session.state.sandboxId}/terminals`, { headers: { authorization: `Bearer ${stack.token}` } })).json()) as { status: string }[] | { terminals: { status: string }[] };
    const list = Array.isArray(terminals) ? terminals : terminals.terminals;
    expect(list.filter((terminal) => terminal.status === "running")).toEqual([]);
  });

  it("refuses a port that is not exposed, or not a port, with SandboxExposedPortUnavailableError", async () => {
    const session = await track(new EdgeSandboxClient({ url: stack.url, token: stack.token }).create());
    const notExposed = await session.resolveExposedPort(4321).catch((error: unknown) => error);
    expect(notExposed).toBeInstanceOf(SandboxExposedPortUnavailableError);
    expect((notExposed as Error).message).toMatch(/port_not_exposed/);
    const ours = await new EdgeSandboxClient({ url: stack.url, token: stack.token, exposedPorts: [3000] })
      .create(new Manifest({ root: "/workspace" }))
      .catch((error: unknown) => error);
    expect(ours).toBeInstanceOf(SandboxProviderError);
    expect((ours as Error).message).toMatch(/invalid_request/);
    const wrongToken = await new EdgeSandboxClient({ url: stack.url, token: "not-the-token" }).create(new Manifest({ root: "/workspace" })).catch((error: unknown) => error);
    expect(wrongToken).toBeInstanceOf(SandboxProviderError);
    expect((wrongToken as Error).message).toMatch(/unauthorized/);
  });
});
