/**
 * The envelope of every answer the container server gives: `success` and `timestamp` around the
 * record (an error is errors.ts's ErrorResponse instead). The Durable Object takes it off and passes
 * the record on.
 */

export interface SuccessEnvelope {
  success: true;
  timestamp: string;
}

/** A response body without its envelope: the record a caller of the Durable Object gets back. */
export type WithoutEnvelope<R extends SuccessEnvelope> = Omit<R, keyof SuccessEnvelope>;

export function withoutEnvelope<R extends SuccessEnvelope>({ success: _ok, timestamp: _at, ...record }: R): WithoutEnvelope<R> {
  return record;
}
