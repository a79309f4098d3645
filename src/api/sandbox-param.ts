/** Resolves `:id` of /v1/sandboxes/:id/… to that sandbox's Durable Object, after validating the id. */
import type { MiddlewareHandler } from "hono";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { rpcTransport } from "../rpc/stub-transport.ts";
import { errorResponse } from "./errors.ts";
import type { ApiEnv } from "./types.ts";
import type { Env } from "../env.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

/** The Durable Object of a sandbox id (already validated) as a SandboxRpc. */
export function sandboxStub(env: Env, id: string): SandboxRpc {
  return rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id)));
}

export function sandboxParam(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const id = c.req.param("id") ?? "";
    const result = sandboxIdSchema.safeParse(id);
    if (!result.success) {
      const { message, issues } = describeValidationError(result.error, `sandbox id ${JSON.stringify(id)}`);
      return errorResponse(c, "INVALID_SANDBOX_ID", message, { sandboxId: id, issues });
    }
    c.set("sandboxId", id);
    c.set("sandbox", sandboxStub(c.env, id));
    await next();
  };
}
