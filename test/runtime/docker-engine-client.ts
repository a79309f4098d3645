/**
 * A client of the runtime's Docker engine for tests: one HTTP/1.1 request per connection over its
 * unix socket, as workerd sends them, and a CONNECT through an emulated sidecar's port.
 */
import { request } from "node:http";
import { connect } from "node:net";

export interface EngineReply {
  status: number;
  body: any;
  text: string;
}

export function engineCall(socketPath: string, method: string, path: string, body?: unknown): Promise<EngineReply> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    const req = request({ socketPath, method, path, headers: { host: "localhost", ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) }) } }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (data += chunk));
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = data === "" ? undefined : JSON.parse(data);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text: data });
      });
    });
    req.on("error", reject);
    req.end(text);
  });
}

/**
 * Opens a tunnel through a sidecar to `port` of its container (as workerd's getTcpPort does), sends
 * `payload` on it and answers the CONNECT's status line and whatever came back until the other side closed.
 */
export function throughSidecar(sidecarPort: number, port: number, payload: string): Promise<{ connectStatus: number; reply: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: sidecarPort });
    let received = "";
    let connectStatus = 0;
    socket.setEncoding("utf8");
    socket.once("connect", () => socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Dst-Addr: 127.0.0.1:${port}\r\n\r\n`));
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (connectStatus === 0 && received.includes("\r\n\r\n")) {
        connectStatus = Number(/^HTTP\/1\.1 (\d+)/.exec(received)?.[1] ?? -1);
        received = received.slice(received.indexOf("\r\n\r\n") + 4);
        if (connectStatus === 200) socket.write(payload);
      }
    });
    socket.once("error", reject);
    socket.once("close", () => resolve({ connectStatus, reply: received }));
  });
}
