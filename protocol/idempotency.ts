/**
 * At-most-once runs. A caller that may send the same run twice (a retry after a dropped connection)
 * names it with an idempotency key: within the key's window the same key never starts a second run,
 * the retry attaches to the first one instead. A caller-given process id serves the same way. The
 * key is remembered by the container that ran the command, with what was asked, so the same key
 * with a different request is refused rather than answered with another run's result; the Durable
 * Object remembers which container each key went to, so a later container never runs it again.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

/** Printable ASCII without spaces, as HTTP's Idempotency-Key header allows, and short enough to keep thousands. */
export const idempotencyKeySchema = lazySchema(() => z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, "idempotency keys are printable ASCII without spaces")
  .describe(
    "Names this run: the same key within the idempotency window never starts a second run; a retry attaches to the first one (its result, or its stream from the resume point)",
  ));
