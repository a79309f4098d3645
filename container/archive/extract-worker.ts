/**
 * The worker thread extractions run in (extract-off-loop.ts starts it and hands it one extraction at
 * a time): the decompression, the framing check, node-tar's synchronous unpacking and the links, all
 * off the server's event loop, so however long an archive takes, every other call of the sandbox is
 * answered meanwhile, and the server can end it at any point (terminate() stops even a loop that
 * never yields).
 *
 * Its side of the conversation, per extraction: {start} with the folder and the limits, the body's
 * chunks ({chunk}, then {end}), each answered {took} once handled (the server sends a few ahead, no
 * more); then one {done} (with whether the whole body was read, so the thread can take the next
 * extraction), {refused} or {failed}.
 */
import { parentPort } from "node:worker_threads";
import { ServiceError } from "../../server-kit/service-error.ts";
import { extractTree } from "./extract-tree.ts";
import type { FromWorker, ToWorker } from "./extract-messages.ts";

const port = parentPort!;
const queue: ToWorker[] = [];
let wake: (() => void) | undefined;
port.on("message", (message: ToWorker) => {
  queue.push(message);
  wake?.();
});

async function next(): Promise<ToWorker> {
  while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
  wake = undefined;
  return queue.shift()!;
}

function send(message: FromWorker): void {
  port.postMessage(message);
}

for (;;) {
  const first = await next();
  if (!("start" in first)) continue;
  let sawEnd = false;
  /** This extraction's body, as the server sends it. */
  const received = async function* (): AsyncGenerator<Buffer> {
    for (;;) {
      const message = await next();
      if ("end" in message) {
        sawEnd = true;
        return;
      }
      if (!("chunk" in message)) continue;
      yield Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength);
      send({ took: true });
    }
  };
  try {
    const result = await extractTree(first.start.workspace, received(), first.start.limits);
    send({ done: result, reusable: sawEnd });
  } catch (error) {
    if (error instanceof ServiceError) send({ refused: { code: error.code, message: error.message, ...(error.context ? { context: error.context } : {}) } });
    else {
      const { code, message } = error as NodeJS.ErrnoException;
      send({ failed: { message, ...(code === undefined ? {} : { errno: code }) } });
    }
  }
}
