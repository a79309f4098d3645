/**
 * The MCP endpoint on our Worker, driven by the official MCP client SDK (`Client` over
 * `StreamableHTTPClientTransport`) against the shared `npm start` stack: every tool, output streamed as
 * progress notifications, a matplotlib figure as image content, both endpoints (shared with a
 * `sandbox` argument, and per sandbox), both protocol eras (the 2025 handshake desktop clients speak,
 * and 2026-07-28 negotiation), and the errors: an unknown tool, wrong arguments, a missing sandbox,
 * a port that is not exposed, sandbox errors with their codes, and no token.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client";
import { describe, expect, inject, it } from "vitest";
import { MCP_PATHS, sandboxMcpPath } from "../../src/mcp/paths.ts";
import { SANDBOX_TOOLS } from "../../src/mcp/tools/index.ts";

const url = (path: string) => new URL(path, inject("stackUrl"));
const token = () => inject("stackToken");
const sandboxName = (label: string) => `mcp-${label}-${Math.random().toString(36).slice(2, 8)}`;

interface Connect {
  path?: string;
  /** "auto": negotiate the 2026-07-28 protocol; default: the 2025 handshake. */
  era?: "legacy" | "auto";
  headers?: Record<string, string>;
}

async function connect({ path = MCP_PATHS.shared, era = "legacy", headers = { authorization: `Bearer ${token()}` } }: Connect = {}): Promise<Client> {
  const client = new Client({ name: "edge-sandbox-tests", version: "1.0.0" }, era === "auto" ? { versionNegotiation: { mode: "auto" } } : {});
  await client.connect(new StreamableHTTPClientTransport(url(path), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured content of a result that must have succeeded. */
function structured(result: CallToolResult): Record<string, unknown> {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

/** The wire code of a tool error. */
function errorCode(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  const { error } = result.structuredContent as { error: { code: string; message: string } };
  expect((result.content[0] as { text: string }).text).toBe(`${error.code}: ${error.message}`);
  return error.code;
}

const firstText = (result: CallToolResult) => (result.content.find((item) => item.type === "text") as { text: string } | undefined)?.text ?? "";

describe.concurrent("MCP endpoint through the official client SDK", () => {
  it("refuses a client without the API token (401)", async () => {
    const raw = await fetch(url(MCP_PATHS.shared), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await raw.json()).toMatchObject({ code: "UNAUTHORIZED" });
    await expect(connect({ headers: {} })).rejects.toThrow();
    await expect(connect({ headers: { authorization: "Bearer wrong" } })).rejects.toThrow();
    await expect(connect({ path: sandboxMcpPath(sandboxName("auth")), headers: {} })).rejects.toThrow();
  });

  it("lists every tool: with a required sandbox argument on the shared endpoint, without it per sandbox", async () => {
    for (const era of ["legacy", "auto"] as const) {
      const shared = await connect({ era });
      const { tools } = await shared.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(SANDBOX_TOOLS.map((tool) => tool.name));
      for (const tool of tools) {
        expect(tool.inputSchema.required ?? [], tool.name).toContain("sandbox");
        expect(tool.description, tool.name).toBeTruthy();
      }
      await shared.close();
    }
    const own = await connect({ path: sandboxMcpPath(sandboxName("list")) });
    const { tools } = await own.listTools();
    expect(tools).toHaveLength(SANDBOX_TOOLS.length);
    for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {}), tool.name).not.toContain("sandbox");
    expect(own.getServerVersion()).toMatchObject({ name: "edge-sandbox" });
    await own.close();
  });

  it("run_command streams its output as progress notifications, then returns the exit code and output", async () => {
    for (const era of ["legacy", "auto"] as const) {
      const client = await connect({ era });
      const sandbox = sandboxName(`run-${era}`);
      const progress: { progress: number; message?: string }[] = [];
      const result = (await client.callTool(
        { name: "run_command", arguments: { sandbox, command: "for i in 1 2 3; do echo tick $i; sleep 0.3; done; echo oops >&2; exit 3" } },
        { onprogress: (update) => progress.push(update) },
      )) as CallToolResult;
      expect(structured(result)).toMatchObject({ exitCode: 3, stdout: "tick 1\ntick 2\ntick 3\n", stderr: "oops\n" });
      // Each tick came as it was printed: in notifications of its own, before the result.
      expect(progress.map((p) => p.message).join(""), era).toContain("tick 1\n");
      expect(progress.length, era).toBeGreaterThanOrEqual(3);
      expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
      const after = await call(client, "run_command", { sandbox, command: "pwd; echo $GREETING", env: { GREETING: "hi" }, cwd: "/tmp" });
      expect(structured(after)).toMatchObject({ exitCode: 0, stdout: "/tmp\nhi\n" });
      // Past its time limit: a result (exit code 124, timed out) with the output so far, not a tool error.
      const slow = await call(client, "run_command", { sandbox, command: "echo begun; sleep 30", timeout: 300 });
      expect(slow.isError, era).toBeFalsy();
      expect(structured(slow)).toMatchObject({ exitCode: 124, timedOut: true, stdout: "begun\n" });
      await client.close();
    }
  });

  it("run_code returns printed output, a matplotlib figure as a PNG image, HTML as a resource, and errors as tool errors", async () => {
    const client = await connect({ path: sandboxMcpPath(sandboxName("code")) });
    const figure = await call(client, "run_code", {
      code: [
        "import matplotlib",
        "matplotlib.use('Agg')",
        "import matplotlib.pyplot as plt",
        "print('plotting')",
        "plt.plot([1, 2, 3], [1, 4, 9])",
        "plt.show()",
      ].join("\n"),
    });
    expect(figure.isError).toBeFalsy();
    expect(figure.content[0]).toEqual({ type: "text", text: "plotting\n" });
    const image = figure.content.find((item) => item.type === "image") as { data: string; mimeType: string };
    expect(image.mimeType).toBe("image/png");
    expect(Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");
    // Beside the image, the figure's chart data, for a client to redraw and a model to read.
    const chart = figure.content.find((item) => item.type === "resource" && (item as { resource: { mimeType: string } }).resource.mimeType === "application/json") as
      | { resource: { text: string; uri: string } }
      | undefined;
    expect(chart?.resource.uri).toMatch(/\.chart\.json$/);
    const data = JSON.parse(chart!.resource.text) as { type: string; elements: { points: number[][] }[] };
    expect(data.type).toBe("line");
    expect(data.elements[0]!.points).toEqual([[1, 1], [2, 4], [3, 9]]);

    const table = await call(client, "run_code", { code: "import pandas as pd\npd.DataFrame({'a': [1, 2]})" });
    const html = table.content.find((item) => item.type === "resource") as { resource: { mimeType: string; text: string; uri: string } };
    expect(html.resource.mimeType).toBe("text/html");
    expect(html.resource.text).toContain("<table");
    expect(html.resource.uri).toMatch(/^sandbox:\/\//);

    const state = await call(client, "run_code", { code: "x = 41\nx + 1" });
    expect(firstText(state)).toBe("42");
    const js = await call(client, "run_code", { code: "const n = 6 * 7; n", language: "javascript" });
    expect(firstText(js)).toBe("42");

    const failed = await call(client, "run_code", { code: "1 / 0" });
    expect(failed.isError).toBe(true);
    expect(firstText(failed)).toContain("ZeroDivisionError");
    expect(failed.structuredContent).toMatchObject({ error: { name: "ZeroDivisionError" } });
    await client.close();
  });

  it("writes, reads, lists and searches files; a PNG file reads as an image", async () => {
    const client = await connect({ era: "auto" });
    const sandbox = sandboxName("files");
    expect(structured(await call(client, "write_file", { sandbox, path: "src/app.ts", content: "export const answer = 42;\n// TODO: more\n" }))).toMatchObject({
      bytesWritten: 40,
    });
    await call(client, "write_file", { sandbox, path: "src/notes.md", content: "todo: nothing\n" });
    expect(firstText(await call(client, "read_file", { sandbox, path: "src/app.ts" }))).toBe("export const answer = 42;\n// TODO: more\n");

    const listing = structured(await call(client, "list_files", { sandbox, path: "src" }));
    expect((listing.files as { path: string }[]).map((file) => file.path).sort()).toEqual(["app.ts", "notes.md"]);
    const everything = structured(await call(client, "list_files", { sandbox, recursive: true }));
    expect((everything.files as { path: string }[]).map((file) => file.path)).toContain("src/app.ts");

    const found = structured(await call(client, "search_files", { sandbox, pattern: "TODO|todo", path: "src", glob: "*.ts" }));
    expect(found.matches).toEqual([{ path: "src/app.ts", line: 2, text: "// TODO: more" }]);
    const anyCase = structured(await call(client, "search_files", { sandbox, pattern: "todo", ignoreCase: true, maxResults: 1 }));
    expect(anyCase).toMatchObject({ truncated: true });
    expect(anyCase.matches).toHaveLength(1);
    expect(structured(await call(client, "search_files", { sandbox, pattern: "no such words" })).matches).toEqual([]);
    expect(errorCode(await call(client, "search_files", { sandbox, pattern: "x", path: "missing-dir" }))).toBe("FILE_NOT_FOUND");
    expect(errorCode(await call(client, "search_files", { sandbox, pattern: "(unclosed", path: "src" }))).toBe("INVALID_REQUEST");

    // A one-pixel PNG, written as base64 and read back as image content.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await call(client, "write_file", { sandbox, path: "pixel.png", content: png, encoding: "base64" });
    const read = await call(client, "read_file", { sandbox, path: "pixel.png" });
    expect(read.content).toEqual([{ type: "image", data: png, mimeType: "image/png" }]);

    expect(errorCode(await call(client, "read_file", { sandbox, path: "nope.txt" }))).toBe("FILE_NOT_FOUND");
    expect(errorCode(await call(client, "read_file", { sandbox, path: "/etc/../../outside" }))).toBe("FILE_NOT_FOUND");
    expect(errorCode(await call(client, "read_file", { sandbox, path: "/proc/self/environ" }))).toBe("PERMISSION_DENIED");
    await client.close();
  });

  it("starts, lists, reads and kills a background process", async () => {
    const client = await connect({ path: sandboxMcpPath(sandboxName("procs")) });
    const started = structured(await call(client, "start_process", { command: "echo ready; while true; do sleep 1; done", processId: "looper" }));
    expect(started.process).toMatchObject({ id: "looper", command: "echo ready; while true; do sleep 1; done" });
    let logs: Record<string, unknown> = {};
    for (let tries = 0; tries < 50 && logs.stdout !== "ready\n"; tries++) {
      logs = structured(await call(client, "read_process_logs", { processId: "looper" }));
      if (logs.stdout !== "ready\n") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logs).toMatchObject({ stdout: "ready\n", stderr: "", process: { id: "looper", status: "running" } });
    const listed = structured(await call(client, "list_processes", {}));
    expect(listed.processes).toContainEqual(expect.objectContaining({ id: "looper", status: "running" }));
    expect(structured(await call(client, "kill_process", { processId: "looper", signal: "SIGKILL" }))).toMatchObject({ processId: "looper", signal: "SIGKILL" });
    let status = "running";
    for (let tries = 0; tries < 50 && status === "running"; tries++) {
      status = ((structured(await call(client, "read_process_logs", { processId: "looper" })).process as { status: string }).status);
      if (status === "running") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe("killed");
    expect(errorCode(await call(client, "kill_process", { processId: "never-started" }))).toBe("PROCESS_NOT_FOUND");
    expect(errorCode(await call(client, "read_process_logs", { processId: "never-started" }))).toBe("PROCESS_NOT_FOUND");
    expect(errorCode(await call(client, "kill_process", { processId: "looper", signal: "SIGNOPE" }))).toBe("INVALID_SIGNAL");
    await client.close();
  });

  it("exposes a port as a preview URL, lists it, and unexposes it; unexposing is idempotent", async () => {
    const client = await connect();
    const sandbox = sandboxName("ports");
    const exposed = structured(await call(client, "expose_port", { sandbox, port: 8080, name: "web", public: true }));
    expect(exposed).toMatchObject({ port: 8080, name: "web", public: true });
    expect(exposed.url).toMatch(/^http:\/\/8080-mcp-ports-[a-z0-9]+\.localhost:\d+\/$/);
    const listed = structured(await call(client, "list_ports", { sandbox }));
    expect(listed.ports).toEqual([expect.objectContaining({ port: 8080, url: exposed.url })]);
    expect(structured(await call(client, "unexpose_port", { sandbox, port: 8080 }))).toEqual({ port: 8080 });
    expect(structured(await call(client, "unexpose_port", { sandbox, port: 8080 }))).toEqual({ port: 8080 });
    expect(structured(await call(client, "unexpose_port", { sandbox, port: 9999 }))).toEqual({ port: 9999 });
    expect(structured(await call(client, "list_ports", { sandbox })).ports).toEqual([]);
    await client.close();
  });

  it("answers an unknown tool with the SDK's protocol error, and wrong arguments or a missing sandbox as input errors", async () => {
    for (const era of ["legacy", "auto"] as const) {
      const client = await connect({ era });
      const unknown = client.callTool({ name: "format_disk", arguments: { sandbox: "x" } });
      await expect(unknown).rejects.toBeInstanceOf(ProtocolError);
      await expect(unknown).rejects.toThrow(/format_disk/);

      const wrongType = await call(client, "run_command", { sandbox: sandboxName("args"), command: 42 });
      expect(wrongType.isError).toBe(true);
      expect(firstText(wrongType)).toMatch(/^Input validation error: .*command/s);

      const noSandbox = await call(client, "run_command", { command: "echo hi" });
      expect(noSandbox.isError).toBe(true);
      expect(firstText(noSandbox)).toMatch(/^Input validation error: .*sandbox/s);

      const badSandbox = await call(client, "run_command", { sandbox: "../etc", command: "echo hi" });
      expect(badSandbox.isError).toBe(true);
      expect(firstText(badSandbox)).toMatch(/^Input validation error: .*sandbox/s);

      const extra = await call(client, "list_processes", { sandbox: sandboxName("extra"), everything: true });
      expect(extra.isError).toBe(true);
      expect(firstText(extra)).toMatch(/^Input validation error/);

      const lowPort = await call(client, "expose_port", { sandbox: sandboxName("port"), port: 80 });
      expect(firstText(lowPort)).toMatch(/^Input validation error: .*1024/s);

      // The endpoint is still there after all of that.
      expect(structured(await call(client, "run_command", { sandbox: sandboxName("after"), command: "echo fine" }))).toMatchObject({ stdout: "fine\n" });
      await client.close();
    }
  });

  it("answers a body that is not JSON-RPC without a crash, and a per-sandbox path with a bad id with INVALID_SANDBOX_ID", async () => {
    const headers = { authorization: `Bearer ${token()}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const garbage = await fetch(url(MCP_PATHS.shared), { method: "POST", headers, body: "{not json" });
    expect(garbage.status).toBe(400);
    const badId = await fetch(url("/v1/sandboxes/a..b/mcp"), { method: "POST", headers, body: "{}" });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toMatchObject({ code: "INVALID_SANDBOX_ID" });
    const client = await connect();
    expect(structured(await call(client, "run_command", { sandbox: sandboxName("still"), command: "echo up" }))).toMatchObject({ stdout: "up\n" });
    await client.close();
  });
});
