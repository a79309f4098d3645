/**
 * A container's WebSocket through the Worker's outbound handler: once the server has answered the
 * judged (and injected) handshake with 101, the container gets one end of a new pair and the
 * handler relays messages between it and the server's socket, counting bytes each way, so the
 * audit entry, written when either side closes, says what went through as the local proxy's does.
 */

/** Answers the container's handshake with its end of the relay; `ended` gets the bytes sent out and received. */
export function joinedWebSockets(upstream: WebSocket, ended: (bytesOut: number, bytesIn: number) => Promise<void>): Response {
  const [containerEnd, ours] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  let bytesOut = 0;
  let bytesIn = 0;
  let finished = false;
  const finish = (code: number, reason: string) => {
    if (finished) return;
    finished = true;
    for (const socket of [ours, upstream]) {
      try {
        socket.close(closable(code), reason);
      } catch {
        // Already closed.
      }
    }
    void ended(bytesOut, bytesIn);
  };
  ours.accept();
  upstream.accept();
  ours.addEventListener("message", (event) => {
    bytesOut += sizeOf(event.data);
    upstream.send(event.data);
  });
  upstream.addEventListener("message", (event) => {
    bytesIn += sizeOf(event.data);
    ours.send(event.data);
  });
  for (const socket of [ours, upstream]) {
    socket.addEventListener("close", (event) => finish(event.code, event.reason));
    socket.addEventListener("error", () => finish(1011, "relay failed"));
  }
  return new Response(null, { status: 101, webSocket: containerEnd });
}

function sizeOf(data: string | ArrayBuffer): number {
  return typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength;
}

/** Codes an endpoint may send (1005, 1006 and 1015 only describe a close, they are never sent). */
function closable(code: number): number {
  return code === 1005 || code === 1006 || code === 1015 ? 1000 : code;
}
