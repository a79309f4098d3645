/**
 * Bearer-token auth from the SANDBOX_API_TOKEN secret. With no secret configured every request is
 * refused (503 AUTH_NOT_CONFIGURED): a sandbox API that runs arbitrary commands never runs open.
 */
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { errorBody } from "../../protocol/errors.ts";
import type { ApiEnv } from "./types.ts";
import { errorResponse } from "./errors.ts";

const unauthorized = (message: string) => () => errorBody("UNAUTHORIZED", message);

export function requireToken(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const token = c.env.SANDBOX_API_TOKEN;
    if (!token) {
      return errorResponse(
        c,
        "AUTH_NOT_CONFIGURED",
        "This sandbox API has no SANDBOX_API_TOKEN secret configured, so it refuses all requests. " +
          "Set one with `wrangler secret put SANDBOX_API_TOKEN` (npm start generates a local one).",
      );
    }
    const check = bearerAuth<ApiEnv>({
      token,
      noAuthenticationHeader: { message: unauthorized("Missing `Authorization: Bearer <token>` header") },
      invalidAuthenticationHeader: { message: unauthorized("Malformed Authorization header: expected `Bearer <token>`") },
      invalidToken: { message: unauthorized("Invalid API token") },
    });
    return check(c, next);
  };
}
