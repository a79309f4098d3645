/**
 * How a failure of the container's engine or of the local runtime leaves the Durable Object, always
 * with a code. A refusal the runtime gave a code for (ISOLATION_UNAVAILABLE, ISOLATION_NOT_ALLOWED,
 * TOO_MANY_SANDBOXES, …) keeps it: its runtime channel answers it as a LocalRuntimeError, and its
 * Docker engine opens the message workerd passes on with it in brackets. Anything else workerd's
 * container client throws (an engine it cannot reach, "No such image", another engine error) is
 * CONTAINER_UNAVAILABLE, saying what to start where an engine is not reachable. workerd passes on
 * no reason for a start that failed after its create: the runtime keeps it (its code and message),
 * and a Durable Object with a runtime channel asks for it.
 */
import { isErrorCode } from "../../protocol/errors.ts";
import { ContainerUnavailableError, errorFromCode, SandboxError } from "../rpc/errors.ts";
import { LocalRuntimeError, unreachableMessage, type RuntimeChannel } from "./runtime-channel.ts";

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

/** The engine's own code, as its message carries it: "[CODE] reason". */
const BRACKETED_CODE = /\[([A-Z][A-Z_]+)\]\s*([^\n]*)/;
/** What workerd says when the engine's socket answers nothing. */
const UNREACHABLE = /\b(ENOENT|ECONNREFUSED|No such file or directory|Connection refused|connect\(\)|Failed to connect|Network connection lost)\b/i;

/**
 * A container that could not be `doing` ("started", "destroyed"), as a coded error. `engine` names
 * where the container engine is, for the message of one not answering.
 */
export function containerFailure(error: unknown, doing: string, engine: string): SandboxError {
  if (error instanceof SandboxError) return error;
  const coded = runtimeCoded(error);
  if (coded instanceof SandboxError && coded.code !== "CONTAINER_UNAVAILABLE") return coded;
  const message = error instanceof Error ? error.message : String(error);
  const bracketed = BRACKETED_CODE.exec(message);
  if (bracketed && isErrorCode(bracketed[1]) && bracketed[1] !== "CONTAINER_UNAVAILABLE") {
    return errorFromCode(bracketed[1], bracketed[2]!.trim() || message, { cause: error });
  }
  const reason = error instanceof LocalRuntimeError ? message : UNREACHABLE.test(message) ? unreachableMessage(engine, error) : message;
  return new ContainerUnavailableError(`The sandbox's container could not be ${doing}: ${reason}`, { cause: error });
}

/** A start that failed, coded: the runtime's own reason where it kept one, else as containerFailure says. */
export async function startFailure(error: unknown, runtime: RuntimeChannel | undefined, engine: string): Promise<SandboxError> {
  const failure = containerFailure(error, "started", engine);
  if (!runtime || failure.code !== "CONTAINER_UNAVAILABLE") return failure;
  let refusal;
  try {
    refusal = (await runtime.state()).startRefusal;
  } catch (unreachable) {
    // The runtime is gone with its engine: say so, and what to start.
    const coded = runtimeCoded(unreachable);
    return coded instanceof SandboxError ? coded : failure;
  }
  return refusal ? errorFromCode(refusal.code, refusal.message, { cause: error }) : failure;
}
