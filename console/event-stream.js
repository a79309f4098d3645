// @ts-check
/**
 * Follows a signed event-stream URL with the browser's EventSource, which resumes a dropped
 * connection by itself from the last event id. Each SSE message is one JSON event named by its
 * type; `error` is both our event name and EventSource's own connection-trouble event, told apart by
 * whether it carries data.
 */

/**
 * @param {string} url signed URL of a process log or exec stream
 * @param {string[]} types the event types to deliver
 * @param {(event: any) => void} onEvent
 * @param {() => void} [onTrouble] the connection dropped (EventSource retries) or was refused
 * @returns {() => void} stops following
 */
export function followEvents(url, types, onEvent, onTrouble) {
  const source = new EventSource(url);
  for (const type of types) {
    source.addEventListener(type, (message) => {
      if (!(message instanceof MessageEvent) || typeof message.data !== "string" || message.data === "") {
        onTrouble?.();
        return;
      }
      onEvent(JSON.parse(message.data));
    });
  }
  if (!types.includes("error")) source.addEventListener("error", () => onTrouble?.());
  return () => source.close();
}
