/**
 * The event stream a Bridge exec answers with: named events (`event: stdout`, `data: …`), written at
 * the reader's pace, with a `: keepalive` comment whenever the stream has been quiet for the
 * keepalive interval, so a command that prints nothing for a long time keeps its connection.
 */
import { LIMITS } from "../../../protocol/limits.ts";
import { KEEPALIVE_FRAME, SSE_HEADERS } from "../../../protocol/sse.ts";

export interface BridgeEventStream {
  response: Response;
  /** Writes one event; resolves once the reader has taken it, rejects when the reader is gone. */
  send(event: string, data: string): Promise<void>;
  close(): Promise<void>;
}

export function bridgeEventStream(keepaliveMs: number = LIMITS.keepaliveMs): BridgeEventStream {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  let lastWrite = Date.now();
  const write = (text: string) => {
    lastWrite = Date.now();
    return writer.write(encoder.encode(text));
  };
  const keepalive = setInterval(() => {
    if (Date.now() - lastWrite >= keepaliveMs) write(KEEPALIVE_FRAME).catch(() => clearInterval(keepalive));
  }, keepaliveMs / 3);
  return {
    response: new Response(readable, { headers: SSE_HEADERS }),
    send: (event, data) => write(`event: ${event}\ndata: ${data}\n\n`),
    async close() {
      clearInterval(keepalive);
      await writer.close().catch(() => undefined);
    },
  };
}
