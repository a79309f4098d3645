/**
 * The proxy's reset of a connection whose side it has just ended (runtime/egress/reset-socket.ts):
 * a sandbox half-closes, its end is passed on, and its container stops in the same moment. A plain
 * reset is refused then, and the connection used to stay open on both hosts for good.
 */
import { execFileSync } from "node:child_process";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetSocket } from "../../runtime/egress/reset-socket.ts";
import { eventually } from "./helpers.ts";

let server: Server;
let port: number;
const accepted: Socket[] = [];

beforeAll(async () => {
  // As a server that holds what it is given: it keeps its side open after the client's end.
  server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on("error", () => undefined);
    accepted.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => {
  for (const socket of accepted) socket.destroy();
  server.close();
});

/** This machine's ends of the connection from `client` to the server, in any state but TIME-WAIT. */
const connections = (client: Socket) => {
  const local = client.localPort ?? -1;
  return execFileSync("ss", ["-Htan", "state", "all", `( sport = :${local} or dport = :${local} )`], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("TIME-WAIT"));
};

describe("a reset right after the proxy ended its side", () => {
  it("closes the connection on both hosts, and the socket", async () => {
    const client = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    client.on("error", () => undefined);
    await new Promise((resolve) => client.once("connect", resolve));
    const closed = new Promise((resolve) => client.once("close", resolve));
    const local = { localPort: client.localPort } as Socket;
    client.end();
    resetSocket(client);
    await closed;
    expect(await eventually(() => connections(local).length === 0, 5_000), connections(local).join("\n")).toBe(true);
  });

  it("resets at once a connection nobody ended", async () => {
    const client = connect({ port, host: "127.0.0.1" });
    client.on("error", () => undefined);
    await new Promise((resolve) => client.once("connect", resolve));
    await eventually(() => accepted.length >= 2, 5_000);
    const reset = new Promise<string | undefined>((resolve) => accepted.at(-1)!.once("error", (error: NodeJS.ErrnoException) => resolve(error.code)));
    const local = { localPort: client.localPort } as Socket;
    resetSocket(client);
    expect(await reset).toBe("ECONNRESET");
    expect(await eventually(() => connections(local).length === 0, 5_000), connections(local).join("\n")).toBe(true);
  });
});
