/**
 * Schemas of the /v1 API that are not a method's (those are in protocol/, named by the method
 * bindings): the error answer every route may give, and the query of the raw file download.
 */
import { z } from "zod";
import { FILE_LIMITS } from "../../protocol/files.ts";
import { ERROR_CODES } from "../../protocol/errors.ts";

/** `GET /files/content?path=…` */
export const fileQuery = z.object({ path: z.string().min(1).max(FILE_LIMITS.maxPathLength).describe("File path (relative: in the workspace)") });

export const errorResponseSchema = z.object({
  success: z.literal(false),
  code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
  message: z.string(),
  httpStatus: z.number().int(),
  timestamp: z.string(),
  context: z.record(z.string(), z.unknown()).optional(),
});
