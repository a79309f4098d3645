// @ts-check
/**
 * Follows an SSE route of the API with fetch, which (unlike EventSource) carries the pasted token:
 * each message is one JSON event, handed on as it arrives; a connection that drops is opened again
 * after the last event id (Last-Event-ID), a few times with a growing pause. An answer of the API's
 * own refusal (a 4xx or 501) ends the following: trying again would not change it.
 */
import { errorOf } from "./api.js";
import { storedToken } from "./token.js";

const ATTEMPTS = 5;

/**
 * @param {string} path an SSE route under /v1
 * @param {(event: any) => void} onEvent
 * @param {(problem: unknown) => void} [onTrouble] a refusal, or a connection that could not be made again
 * @returns {() => void} stops following
 */
export function followFetchedEvents(path, onEvent, onTrouble) {
  const stop = new AbortController();
  /** @type {string | undefined} */
  let lastId;
  void (async () => {
    let failures = 0;
    while (!stop.signal.aborted) {
      try {
        const headers = new Headers({ authorization: `Bearer ${storedToken() ?? ""}` });
        if (lastId !== undefined) headers.set("last-event-id", lastId);
        const response = await fetch(path, { headers, signal: stop.signal });
        if (!response.ok) {
          onTrouble?.(await errorOf(response));
          if (response.status < 500 || response.status === 501) return;
        } else {
          failures = 0;
          await readMessages(/** @type {ReadableStream<Uint8Array>} */ (response.body), (id, data) => {
            if (id !== undefined) lastId = id;
            onEvent(JSON.parse(data));
          });
        }
      } catch (error) {
        if (stop.signal.aborted) return;
        if (++failures > ATTEMPTS) return onTrouble?.(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** failures));
    }
  })();
  return () => stop.abort();
}

/**
 * The messages of an SSE body (ours: one `data:` line each, `id:` when the event has one).
 * @param {ReadableStream<Uint8Array>} body
 * @param {(id: string | undefined, data: string) => void} onMessage
 */
async function readMessages(body, onMessage) {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of /** @type {AsyncIterable<Uint8Array>} */ (/** @type {unknown} */ (body))) {
    pending += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = pending.indexOf("\n\n")) !== -1) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      /** @type {string | undefined} */
      let id;
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = line.slice(4);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data !== "") onMessage(id, data);
    }
  }
}
