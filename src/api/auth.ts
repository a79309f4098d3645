/**
 * Bearer-token auth from the SANDBOX_API_TOKEN secret. With no secret configured every request is
 * refused (503 AUTH_NOT_CONFIGURED): a sandbox API that runs arbitrary commands never runs open.
 * Every other refusal — no header, a header that is not `Bearer <token>`, a wrong token — is a 401
 * whose body says which, with the `WWW-Authenticate` challenge RFC 6750 asks for.
 *
 * A request without the header may instead carry a signed stream URL's signature (./stream-url.ts):
 * it is let in for exactly the method and path the signature names, and refused otherwise with
 * STREAM_URL_INVALID or STREAM_URL_EXPIRED; what it reads may be read from any origin.
 */
import type { Context, MiddlewareHandler } from "hono";
import { timingSafeEqual } from "hono/utils/buffer";
import type { ApiEnv } from "./types.ts";
import { errorResponse } from "./errors.ts";
import { carriesStreamSignature, checkStreamSignature, streamUrlClaims } from "./stream-url.ts";

/** `Bearer`, spaces, then one token of visible characters (RFC 6750's b64token is a subset of these). */
const BEARER = /^Bearer +(\S+) *$/i;

function unauthorized(c: Context<ApiEnv>, challenge: string, message: string): Response {
  c.header("WWW-Authenticate", challenge);
  return errorResponse(c, "UNAUTHORIZED", message);
}

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
    const header = c.req.header("authorization");
    const url = new URL(c.req.url);
    if (!header && carriesStreamSignature(url)) {
      const refusal = await checkStreamSignature(token, c.req.method, url);
      if (refusal) return errorResponse(c, refusal.code, refusal.message);
      c.set("streamGrant", streamUrlClaims(url));
      await next();
      // The URL is the whole grant (no cookie rides along), so any page holding it may read the
      // stream: EventSource from another origin needs this header. A WebSocket needs no CORS.
      if (c.res.status !== 101) c.res.headers.set("Access-Control-Allow-Origin", "*");
      return;
    }
    if (!header) return unauthorized(c, 'Bearer realm="sandbox"', "Missing `Authorization: Bearer <token>` header");
    const given = BEARER.exec(header)?.[1];
    if (given === undefined) {
      return unauthorized(c, 'Bearer realm="sandbox", error="invalid_request"', "Malformed Authorization header: expected `Bearer <token>`");
    }
    if (!(await timingSafeEqual(given, token))) {
      return unauthorized(c, 'Bearer realm="sandbox", error="invalid_token"', "Invalid API token: expected `Authorization: Bearer <token>` with the SANDBOX_API_TOKEN");
    }
    await next();
  };
}

/** Whether an Authorization header carries the API token (preview ports accept it beside their own). */
export async function carriesApiToken(header: string | undefined, token: string | undefined): Promise<boolean> {
  const given = header === undefined ? undefined : BEARER.exec(header)?.[1];
  return given !== undefined && token !== undefined && token !== "" && (await timingSafeEqual(given, token));
}
