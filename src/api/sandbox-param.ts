/** Resolves `:id` of /v1/sandboxes/:id/… to that sandbox's Durable Object, after validating the id. */
import type { MiddlewareHandler } from "hono";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { rpcTransport } from "../rpc/stub-transport.ts";
import { errorResponse } from "./errors.ts";
import type { ApiEnv } from "./types.ts";

export function sandboxParam(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const id = c.req.param("id") ?? "";
    const result = sandboxIdSchema.safeParse(id);
    if (!result.success) {
      const { message, issues } = describeValidationError(result.error, `sandbox id ${JSON.stringify(id)}`);
      return errorResponse(c, "INVALID_SANDBOX_ID", message, { sandboxId: id, issues });
    }
    const namespace = c.env.Sandbox;
    c.set("sandboxId", id);
    c.set("sandbox", rpcTransport(namespace.get(namespace.idFromName(id))));
    await next();
  };
}
