/**
 * How a failure of the local container runtime leaves the Durable Object: a refusal the runtime gave
 * a code for (ISOLATION_UNAVAILABLE, ISOLATION_NOT_ALLOWED, …) keeps that code, so the caller sees
 * the runtime's reason; anything else is left as it is.
 */
import { errorFromCode } from "../rpc/errors.ts";
import { LocalRuntimeError } from "./local-container.ts";

export function runtimeCoded(error: unknown): unknown {
  return error instanceof LocalRuntimeError && error.code !== undefined ? errorFromCode(error.code, error.message, { cause: error }) : error;
}

/** A call to the local runtime, its refusals coded. */
export async function runtimeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw runtimeCoded(error);
  }
}
