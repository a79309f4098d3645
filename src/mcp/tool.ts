/**
 * What one MCP tool is: a name, prose for the model, a zod input schema (built from protocol/ schemas
 * where they fit), and a function of the sandbox's RPC surface. Tools are declared once here and
 * served on both endpoints: the shared one adds a `sandbox` argument in front of each (./server.ts).
 */
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

/** What a tool's run gets beside its arguments. */
export interface ToolCall {
  sandbox: SandboxRpc;
  sandboxId: string;
  /** The Worker's origin, for preview URLs (a loopback origin gives `<port>-<id>.localhost`). */
  origin: string;
  /** The client went away or cancelled: stop reading (a command runs on, as a dropped stream does). */
  signal: AbortSignal;
  /** A progress notification, when the client asked for them (a progressToken); else nothing. */
  progress(progress: number, message: string): Promise<void>;
}

export interface SandboxTool<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: Input;
  annotations?: ToolAnnotations;
  run(args: z.output<Input>, call: ToolCall): Promise<CallToolResult>;
}

/** A tool whose arguments the SDK has checked against its input schema before `run` sees them. */
export type AnySandboxTool = Omit<SandboxTool, "run"> & { run(args: Record<string, unknown>, call: ToolCall): Promise<CallToolResult> };

export function defineTool<Input extends z.ZodObject>(tool: SandboxTool<Input>): AnySandboxTool {
  return tool as unknown as AnySandboxTool;
}

/** A plain answer: the value as JSON text for the model, and as structured content for programs. */
export function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
