/**
 * A code cell's Execution as MCP content, richest form first for each result: PNG and JPEG as image
 * content (base64 with their MIME type), SVG and HTML as embedded text resources with their MIME type,
 * a figure's chart data as an embedded JSON resource, Markdown, JSON and plain text as text. The cell's printed output comes first, its error last.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/server";
import type { Execution, Result } from "../../protocol/code.ts";

type Content = ContentBlock;

function resultContent(result: Result, uri: string): Content[] {
  const content: Content[] = [];
  if (result.png !== undefined) content.push({ type: "image", data: result.png, mimeType: "image/png" });
  if (result.jpeg !== undefined) content.push({ type: "image", data: result.jpeg, mimeType: "image/jpeg" });
  if (result.svg !== undefined) content.push({ type: "resource", resource: { uri: `${uri}.svg`, mimeType: "image/svg+xml", text: result.svg } });
  if (result.html !== undefined) content.push({ type: "resource", resource: { uri: `${uri}.html`, mimeType: "text/html", text: result.html } });
  // A figure's structure beside its image: a client can redraw it, a model can read its numbers.
  if (result.chart !== undefined) content.push({ type: "resource", resource: { uri: `${uri}.chart.json`, mimeType: "application/json", text: JSON.stringify(result.chart) } });
  if (result.markdown !== undefined) content.push({ type: "text", text: result.markdown });
  if (result.json !== undefined) content.push({ type: "text", text: JSON.stringify(result.json, null, 2) });
  // The plain text of a result whose richer forms say it better (a figure's "<Figure …>") is noise,
  // but it is the only form of most values.
  if (result.text !== undefined && content.length === 0) content.push({ type: "text", text: result.text });
  return content;
}

/** `sandboxId`: names the embedded resources (`sandbox://<id>/executions/<run>/<n>.html`). */
export function executionResult(execution: Execution, sandboxId: string): CallToolResult {
  const content: Content[] = [];
  const stdout = execution.logs.stdout.join("");
  const stderr = execution.logs.stderr.join("");
  if (stdout) content.push({ type: "text", text: stdout });
  if (stderr) content.push({ type: "text", text: `stderr:\n${stderr}` });
  execution.results.forEach((result, index) => {
    content.push(...resultContent(result, `sandbox://${encodeURIComponent(sandboxId)}/executions/${encodeURIComponent(execution.executionId)}/${index + 1}`));
  });
  const { error } = execution;
  if (error) content.push({ type: "text", text: [`${error.name}: ${error.value}`, ...error.traceback].join("\n") });
  if (content.length === 0) content.push({ type: "text", text: "(no output)" });
  return {
    content,
    structuredContent: {
      executionId: execution.executionId,
      contextId: execution.contextId,
      language: execution.language,
      executionCount: execution.executionCount,
      ...(error ? { error } : {}),
      ...(execution.timedOut ? { timedOut: true } : {}),
    },
    // An exception in the cell is the cell's outcome, but the model must not read it as success.
    ...(error ? { isError: true } : {}),
  };
}
