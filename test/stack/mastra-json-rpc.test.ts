/**
 * A JSON-RPC connection (vscode-jsonrpc, Content-Length framing, as LSP clients use) over a process
 * handle's Node streams: `reader` is the process's stdout, `writer` its stdin. The peer is a small
 * framed echo server running in the sandbox.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { httpConnection } from "./helpers.ts";

/** Answers every framed request with its own params; a notification "exit" ends it. */
const ECHO_SERVER = `
let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf("\\r\\n\\r\\n");
    if (end < 0) return;
    const length = Number(/Content-Length: (\\d+)/i.exec(buffer.subarray(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString("utf8"));
    buffer = buffer.subarray(end + 4 + length);
    if (message.method === "exit") process.exit(0);
    if (message.id === undefined) continue;
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.params }), "utf8");
    process.stdout.write("Content-Length: " + body.length + "\\r\\n\\r\\n");
    process.stdout.write(body);
  }
});
`;

let sandbox: EdgeSandbox;
beforeAll(async () => {
  sandbox = new EdgeSandbox(httpConnection("mastra-jsonrpc"));
  await sandbox._start();
  await sandbox.writeFiles([{ path: "echo-server.js", content: ECHO_SERVER }]);
});
afterAll(() => sandbox.client.destroy());

describe("JSON-RPC over the handle's reader and writer", () => {
  it("exchanges framed requests and responses with a server in the sandbox", async () => {
    const handle = await sandbox.processes.spawn("node echo-server.js");
    const connection = createMessageConnection(new StreamMessageReader(handle.reader), new StreamMessageWriter(handle.writer));
    connection.listen();

    expect(await connection.sendRequest("echo", { text: "hello" })).toEqual({ text: "hello" });
    // Several in flight at once, multi-byte text, a body larger than one output chunk.
    const big = "x".repeat(200_000);
    const replies = await Promise.all([
      connection.sendRequest("echo", { n: 1, text: "żółw 🐢 カメ" }),
      connection.sendRequest("echo", { n: 2, big }),
      connection.sendRequest("echo", { n: 3, list: [1, 2, 3] }),
    ]);
    expect(replies).toEqual([{ n: 1, text: "żółw 🐢 カメ" }, { n: 2, big }, { n: 3, list: [1, 2, 3] }]);

    await connection.sendNotification("exit");
    expect(await handle.wait()).toMatchObject({ exitCode: 0 });
    connection.dispose();
  });
});
