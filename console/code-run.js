// @ts-check
/**
 * One cell's run, followed as it happens: POST /code/run/stream (the token goes in a header, so the
 * stream is read from fetch, not EventSource), each event handed over the moment it arrives. A
 * connection that breaks before `complete` is resumed at /code/executions/:eid/stream after the
 * last event seen (with a growing pause while reconnections bring nothing), so a flaky network
 * costs no output and no duplicates. The run is named by an idempotency key, so one that breaks
 * before its `start` arrived is asked for again under the same key: the service attaches to the
 * first run instead of running the cell twice. The run goes on in the sandbox when the page stops
 * following it.
 */
import { ApiError, call, sandboxPath } from "./api.js";
import { sseMessages } from "./sse-body.js";

/** Reconnections in a row that bring no event before the run is given up as lost. */
const RESUME_ATTEMPTS = 4;
const RESUME_PAUSE_MS = 250;

/**
 * @param {string} sandboxId
 * @param {{ code: string, contextId: string }} request
 * @param {(event: any) => void} onEvent each code event (start, stdout, stderr, result, error, complete, truncated)
 * @param {AbortSignal} signal stops following (the run itself goes on)
 * @returns {Promise<void>} once `complete` has been handed over
 */
export async function followRun(sandboxId, request, onEvent, signal) {
  const named = { ...request, idempotencyKey: crypto.randomUUID() };
  /** @param {Record<string, string>} headers */
  const run = (headers) => call("POST", sandboxPath(sandboxId, "/code/run/stream"), named, { signal, headers });
  let opening = run({});
  /** @type {string | undefined} */
  let executionId;
  /** @type {string | undefined} */
  let lastEventId;
  let fruitless = 0;
  for (;;) {
    try {
      const response = await opening;
      for await (const message of sseMessages(/** @type {ReadableStream<Uint8Array>} */ (response.body))) {
        fruitless = 0;
        if (message.id !== undefined) lastEventId = message.id;
        const event = JSON.parse(message.data);
        if (event.type === "start") executionId = event.executionId;
        onEvent(event);
        if (event.type === "complete") return;
      }
    } catch (error) {
      // The service's own answers (an unknown context, a run no longer kept) are final; a broken connection is not.
      if (signal.aborted || error instanceof ApiError) throw error;
    }
    if (signal.aborted) throw signal.reason;
    if (++fruitless > RESUME_ATTEMPTS) throw new Error("the run's stream broke off before the run completed");
    await new Promise((resolve) => setTimeout(resolve, RESUME_PAUSE_MS * fruitless));
    /** @type {Record<string, string>} */
    const resumeHeaders = lastEventId === undefined ? {} : { "last-event-id": lastEventId };
    opening =
      executionId === undefined
        ? run(resumeHeaders)
        : call("GET", sandboxPath(sandboxId, `/code/executions/${encodeURIComponent(executionId)}/stream`), undefined, { signal, headers: resumeHeaders });
  }
}
