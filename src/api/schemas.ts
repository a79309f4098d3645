/**
 * The one /v1 schema that is not a method's (those are in protocol/, named by the method bindings):
 * the query of the raw file download.
 */
import { z } from "zod";
import { FILE_LIMITS } from "../../protocol/files.ts";

/** `GET /files/content?path=…` */
export const fileQuery = z.object({ path: z.string().min(1).max(FILE_LIMITS.maxPathLength).describe("File path (relative: in the workspace)") });
