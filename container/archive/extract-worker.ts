/**
 * The worker thread an extraction runs in (extract-off-loop.ts starts one per extraction): the
 * decompression, the framing check, node-tar's synchronous unpacking and the links, all off the
 * server's event loop, so however long an archive takes, every other call of the sandbox is answered
 * meanwhile, and the server can end it at any point (terminate() stops even a loop that never yields).
 *
 * Its side of the conversation: it gets the workspace path and the limits as its data, the body's
 * chunks as messages ({chunk}, then {end}), and answers {took} for each chunk it has handled (the
 * server sends a few ahead, no more), then one {done: result} or {refused: {code, message, context}}.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ServiceError } from "../../server-kit/service-error.ts";
import { extractTree, type ExtractLimits } from "./extract-tree.ts";
import type { ToWorker, FromWorker } from "./extract-messages.ts";

const port = parentPort!;
const { workspace, limits } = workerData as { workspace: string; limits: ExtractLimits };

/** The body's chunks, as the server sends them. */
async function* received(): AsyncGenerator<Buffer> {
  const queue: ToWorker[] = [];
  let wake: (() => void) | undefined;
  port.on("message", (message: ToWorker) => {
    queue.push(message);
    wake?.();
  });
  for (;;) {
    if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
    const message = queue.shift()!;
    if ("end" in message) return;
    yield Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength);
    port.postMessage({ took: true } satisfies FromWorker);
  }
}

function send(message: FromWorker): void {
  port.postMessage(message);
}

try {
  send({ done: await extractTree(workspace, received(), limits) });
} catch (error) {
  if (error instanceof ServiceError) send({ refused: { code: error.code, message: error.message, ...(error.context ? { context: error.context } : {}) } });
  else {
    const { code, message } = error as NodeJS.ErrnoException;
    send({ failed: { message, ...(code === undefined ? {} : { errno: code }) } });
  }
}
port.close();
