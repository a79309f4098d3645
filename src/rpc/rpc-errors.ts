/**
 * Errors across Workers RPC, which keeps only an exception's `name` and `message`: the Durable Object
 * throws its errors with the wire code and context encoded into the message (`[CODE] message`), and
 * the caller rebuilds the error class from them.
 */
import type { ErrorCode } from "../../protocol/errors.ts";
import { asSandboxError, errorFromCode, SandboxError } from "./errors.ts";

const RPC_MESSAGE = /^\[([A-Z][A-Z_]*)\] ([\s\S]*?)(?:\n\[context\] (\{[\s\S]*\}))?$/;

/** The message a Durable Object throws so the caller can rebuild the error: `[CODE] message`. */
export function encodeRpcMessage(code: ErrorCode, message: string, context?: Record<string, unknown>): string {
  return `[${code}] ${message}${context === undefined ? "" : `\n[context] ${JSON.stringify(context)}`}`;
}

/** An Error fit to throw across RPC: encoded message, and the class name for readers of logs. */
export function toRpcError(error: unknown): Error {
  const sandboxError = error instanceof SandboxError ? error : asSandboxError(error);
  const rpcError = new Error(encodeRpcMessage(sandboxError.code, sandboxError.message, sandboxError.context));
  rpcError.name = sandboxError.name;
  return rpcError;
}

/** Runs one RPC call on the Durable Object's side: whatever it throws leaves as toRpcError makes it. */
export async function rpcGuard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toRpcError(error);
  }
}

/** Rebuilds the class of an error thrown across RPC; errors without an encoded code pass through asSandboxError. */
export function fromRpcError(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const match = RPC_MESSAGE.exec(message);
  if (!match) return asSandboxError(error);
  let context: Record<string, unknown> | undefined;
  if (match[3]) {
    try {
      context = JSON.parse(match[3]) as Record<string, unknown>;
    } catch {
      context = undefined;
    }
  }
  return errorFromCode(match[1]!, match[2]!, { ...(context ? { context } : {}), cause: error });
}
