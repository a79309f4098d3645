/**
 * A sandbox error as an MCP tool error: `isError: true`, the wire code first in the text (what a model
 * reads) and `{error: {code, message}}` as structured content (what a program reads). Codes are the
 * ones of protocol/errors.ts, the same a /v1 caller gets. Protocol errors (an unknown tool, arguments
 * that do not fit the schema) are the SDK's own and never come here.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { asSandboxError } from "../rpc/errors.ts";

export function toolError(error: unknown): CallToolResult {
  const { code, message } = asSandboxError(error);
  return {
    isError: true,
    content: [{ type: "text", text: `${code}: ${message}` }],
    structuredContent: { error: { code, message } },
  };
}
