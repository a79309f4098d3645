/**
 * Where the MCP endpoint lives: once for any sandbox (each tool names its sandbox in a `sandbox`
 * argument), and once per sandbox (the tools act on the sandbox in the path). Both answer the
 * Streamable HTTP transport's POST (and its GET/DELETE with 405, as a stateless server does).
 */
export const MCP_PATHS = {
  /** Every tool takes a `sandbox` argument: one endpoint for an agent that works in many sandboxes. */
  shared: "/v1/mcp",
  /** The sandbox is the one in the path: tools take no `sandbox` argument. */
  perSandbox: "/v1/sandboxes/:id/mcp",
} as const;

/** The per-sandbox endpoint of one sandbox, as a caller writes it. */
export function sandboxMcpPath(sandboxId: string): string {
  return MCP_PATHS.perSandbox.replace(":id", encodeURIComponent(sandboxId));
}
