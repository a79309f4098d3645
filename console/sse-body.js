// @ts-check
/**
 * Server-Sent Events read from a fetch() answer's body. EventSource can only GET, and only without
 * headers: a code run is a POST that carries the token, so its stream is read here instead. Only
 * what our streams send is understood (`id`, `event`, `data` lines; `:` comments such as keepalives
 * are skipped).
 */

/**
 * @typedef {{ id: string | undefined, event: string, data: string }} SseMessage
 */

/**
 * The messages of one stream, as they arrive; ends when the body does.
 * @param {ReadableStream<Uint8Array>} body
 * @returns {AsyncGenerator<SseMessage>}
 */
export async function* sseMessages(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = messageEnd(buffer)) !== undefined) {
        const message = parseMessage(buffer.slice(0, end.at));
        buffer = buffer.slice(end.at + end.length);
        if (message) yield message;
      }
    }
  } finally {
    reader.releaseLock();
    void body.cancel().catch(() => {});
  }
}

/** Where the first complete message ends (a blank line), if one has arrived. @param {string} buffer */
function messageEnd(buffer) {
  const match = /\r?\n\r?\n/.exec(buffer);
  return match ? { at: match.index, length: match[0].length } : undefined;
}

/** @param {string} block @returns {SseMessage | undefined} undefined for a comment-only block */
function parseMessage(block) {
  /** @type {string | undefined} */
  let id;
  let event = "message";
  /** @type {string[]} */
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length === 0 ? undefined : { id, event, data: data.join("\n") };
}
