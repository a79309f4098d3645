/**
 * The code route the bindings cannot derive (src/rpc/bindings/code.ts): a buffered run, answered
 * from the run's event stream so that a caller that goes away takes its cell with it (../code-run.ts).
 */
import { Hono } from "hono";
import { runCodeRequestSchema } from "../../../protocol/code.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { runCodeBuffered } from "../code-run.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const codeRoutes = new Hono<ApiEnv>().post(API_METHODS.runCode.path, jsonBody(runCodeRequestSchema), async (c) => {
  const { code, ...options } = c.req.valid("json");
  return runCodeBuffered(c.var.sandbox, code, options);
});
