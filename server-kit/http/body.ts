/**
 * Reading a request body: the raw bytes (size-limited, stops reading as soon as it is too large),
 * and a JSON body parsed and validated against a protocol schema.
 */
import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { ErrorCode } from "../../protocol/errors.ts";
import { nestsDeeperThan } from "../../protocol/json-depth.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { ServiceError } from "../service-error.ts";

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    new ServiceError("PAYLOAD_TOO_LARGE", `request body is larger than ${maxBytes} bytes`, { maxBytes });
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Stop reading here (the response closes the connection) rather than swallow the rest.
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error("request aborted"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}

export interface JsonBodyOptions {
  maxBytes: number;
  /** What an empty body stands for; without it an empty body is INVALID_JSON. */
  whenEmpty?: unknown;
  /** The code of a body that fails the schema (default INVALID_REQUEST). */
  invalidCode?: ErrorCode;
}

/**
 * Parses and validates the JSON body; INVALID_JSON (also for nesting past LIMITS.maxJsonDepth,
 * refused before parsing), or INVALID_REQUEST with the issues, otherwise.
 */
export async function readJsonBody<S extends z.ZodType>(req: IncomingMessage, schema: S, options: JsonBodyOptions): Promise<z.output<S>> {
  const body = await readBody(req, options.maxBytes);
  return parseJsonBody(body.length === 0 ? "" : body.toString("utf8"), schema, options);
}

/** `text` (a body read whole) parsed and validated as readJsonBody does. */
export function parseJsonBody<S extends z.ZodType>(text: string, schema: S, options: Omit<JsonBodyOptions, "maxBytes">): z.output<S> {
  let value: unknown;
  if (text.length === 0 && "whenEmpty" in options) value = options.whenEmpty;
  else {
    if (nestsDeeperThan(text, LIMITS.maxJsonDepth)) {
      throw new ServiceError("INVALID_JSON", `request body nests deeper than ${LIMITS.maxJsonDepth} levels`, { maxDepth: LIMITS.maxJsonDepth });
    }
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ServiceError("INVALID_JSON", text.length === 0 ? "request body is empty" : `malformed JSON: ${(error as Error).message}`);
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const failure = describeValidationError(parsed.error, "request");
    throw new ServiceError(options.invalidCode ?? "INVALID_REQUEST", failure.message, { issues: failure.issues });
  }
  return parsed.data;
}
