/**
 * The MCP server of one request: every tool of ./tools/ registered on an McpServer of the official
 * SDK, acting on one sandbox (the per-sandbox endpoint) or on the sandbox each call names (the shared
 * endpoint, where each tool's schema gains a required `sandbox` argument). A sandbox error becomes a
 * tool error with its code (./errors.ts); an unknown tool or arguments that do not fit the schema are
 * the SDK's protocol errors, answered before any sandbox is reached.
 */
import { McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import { toolError } from "./errors.ts";
import type { ToolCall } from "./tool.ts";
import { SANDBOX_TOOLS } from "./tools/index.ts";

/** Which sandbox the tools act on. */
export type McpScope =
  | { kind: "sandbox"; sandboxId: string; sandbox: SandboxRpc }
  | { kind: "shared"; open(sandboxId: string): SandboxRpc };

/** How this server names itself to clients; the version is the tool set's, not the package's. */
export const MCP_SERVER_INFO = { name: "edge-sandbox", version: "1.0.0" } as const;

const INSTRUCTIONS =
  "Tools to work in a Linux sandbox (a container with /workspace, bash, Python 3 with numpy/pandas/matplotlib, Node): " +
  "run commands and code, read, write, list and search files, run background processes, and expose ports as preview URLs.";

const sandboxArgument = sandboxIdSchema.describe("The sandbox to act on (any name: a sandbox is created on first use)");

export function sandboxMcpServer(scope: McpScope, origin: string): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: INSTRUCTIONS });
  for (const tool of SANDBOX_TOOLS) {
    const inputSchema: z.ZodObject = scope.kind === "shared" ? z.strictObject({ sandbox: sandboxArgument, ...tool.input.shape }) : tool.input;
    server.registerTool(tool.name, { title: tool.title, description: tool.description, inputSchema, ...(tool.annotations ? { annotations: tool.annotations } : {}) }, async (args: Record<string, unknown>, ctx: ServerContext) => {
      const { sandbox: named, ...rest } = args;
      const sandboxId = scope.kind === "shared" ? (named as string) : scope.sandboxId;
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const call: ToolCall = {
        sandbox: scope.kind === "shared" ? scope.open(sandboxId) : scope.sandbox,
        sandboxId,
        origin,
        signal: ctx.mcpReq.signal,
        progress: async (progress, message) => {
          if (progressToken === undefined) return;
          await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress, message } });
        },
      };
      try {
        return await tool.run(scope.kind === "shared" ? rest : args, call);
      } catch (error) {
        return toolError(error);
      }
    });
  }
  return server;
}
