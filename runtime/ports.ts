/** Loopback port helpers: ask the OS for a free port, and wait until something listens on one. */
import { createServer, connect } from "node:net";

export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Resolves once `port` accepts connections; rejects when `abandon` settles first (the process that
 * should listen exited) or after `timeoutMs`. Polls every `intervalMs`: a fresh process gives no
 * other signal that it is listening.
 */
export async function waitForListening(
  port: number,
  options: { host?: string; timeoutMs: number; intervalMs?: number; abandon?: Promise<unknown> },
): Promise<void> {
  const host = options.host ?? "127.0.0.1";
  const deadline = Date.now() + options.timeoutMs;
  let abandoned = false;
  options.abandon?.then(
    () => (abandoned = true),
    () => (abandoned = true),
  );
  for (;;) {
    if (abandoned) throw new Error("exited before it listened");
    if (await canConnect(port, host)) return;
    if (abandoned) throw new Error("exited before it listened");
    if (Date.now() > deadline) throw new Error(`did not listen on ${host}:${port} within ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 15));
  }
}
