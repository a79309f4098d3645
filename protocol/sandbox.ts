/**
 * Sandbox identity. A sandbox id names one Durable Object, one container and (locally) one folder
 * under `.sandbox/`, so it is kept to characters that are safe in URLs, file names and host labels.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

export const SANDBOX_ID_MAX_LENGTH = 64;
export const SANDBOX_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const sandboxIdSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(SANDBOX_ID_MAX_LENGTH)
  .regex(SANDBOX_ID_PATTERN, "sandbox ids start with a letter or digit and use letters, digits and . _ -")
  .refine((id) => !id.includes(".."), "sandbox ids cannot contain '..'"));

export function isValidSandboxId(value: unknown): value is string {
  return sandboxIdSchema.safeParse(value).success;
}
