/**
 * `run_code`: a cell in the sandbox's interpreter (Python by default; JavaScript, TypeScript), whose
 * state carries over between calls in the same context. Figures, HTML and other rich results come
 * back as MCP content of their kind (../code-content.ts).
 */
import { z } from "zod";
import { runCodeRequestSchema } from "../../../protocol/code.ts";
import { executionResult } from "../code-content.ts";
import { defineTool } from "../tool.ts";

const input = z.strictObject({
  code: runCodeRequestSchema.shape.code.describe("The cell's source; the value of its last expression is its main result"),
  language: runCodeRequestSchema.shape.language.describe("python (default), javascript or typescript"),
  contextId: runCodeRequestSchema.shape.contextId.describe("A code context to run in (default: the sandbox's default context for the language)"),
  timeout: runCodeRequestSchema.shape.timeout.describe("Time limit in milliseconds: then the cell is interrupted"),
});

export const runCode = defineTool({
  name: "run_code",
  title: "Run code",
  description:
    "Runs a code cell in a stateful interpreter in the sandbox (Python by default, with numpy, pandas and matplotlib; also JavaScript and TypeScript). " +
    "Variables persist between calls. Returns printed output and rich results: matplotlib figures as PNG images, HTML tables, JSON.",
  input,
  annotations: { destructiveHint: true, openWorldHint: true },
  async run({ code, ...options }, call) {
    return executionResult(await call.sandbox.runCode(code, options), call.sandboxId);
  },
});
