/**
 * A chart as the Python driver sends it, checked against the wire schema before it goes anywhere.
 * The driver's chart reading is best effort over whatever a cell drew; a chart that does not fit
 * the schema must not cost the result its PNG, nor the channel its frame, so it is replaced by an
 * `unknown` chart that says why.
 */
import { chartSchema, type Chart } from "../../protocol/code-chart.ts";

export function checkedChart(sent: unknown): Chart {
  const parsed = chartSchema.safeParse(sent);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  const title = typeof sent === "object" && sent !== null && typeof (sent as { title?: unknown }).title === "string" ? (sent as { title: string }).title : null;
  return { type: "unknown", title, elements: [], reason: `the chart read from the figure did not fit the schema${where}: ${issue?.message ?? "invalid"}` };
}
