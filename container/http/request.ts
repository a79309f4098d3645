/**
 * Reading request input: the JSON body (size-limited, stops reading as soon as it is too large),
 * validated against a protocol schema; query parameters.
 */
import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { ServiceError } from "../errors.ts";
import type { RequestContext } from "./types.ts";

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

/** Parses and validates the JSON body; INVALID_JSON / INVALID_REQUEST (with zod issues) otherwise. */
export async function readJson<S extends z.ZodType>(ctx: RequestContext, schema: S): Promise<z.output<S>> {
  const body = await readBody(ctx.req, ctx.server.limits.maxRequestBodyBytes);
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw new ServiceError("INVALID_JSON", body.length === 0 ? "request body is empty" : `malformed JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
    throw new ServiceError("INVALID_REQUEST", `invalid request: ${where}${first?.message ?? "does not match the schema"}`, {
      issues: parsed.error.issues,
    });
  }
  return parsed.data;
}

/** A non-negative integer query parameter or header value (e.g. `since`), undefined when absent. */
export function parseSeq(value: string | null | undefined, name: string): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new ServiceError("INVALID_REQUEST", `${name} must be a non-negative integer`, { [name]: value });
  }
  return Number(value.trim());
}
