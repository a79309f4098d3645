/**
 * The Worker's door for preview-port traffic, ahead of the API (and its bearer auth: whether the
 * caller may reach a port is the Durable Object's decision, its registry holds the ports and their
 * tokens). Where a request goes is decided from its Host first (../rpc/preview-urls.ts):
 *
 * - `{port}-{id}.localhost` or `{port}-{id}.{SANDBOX_PREVIEW_DOMAIN}`: that port, the path as it is;
 *   any other name under those domains: 404 PORT_NOT_EXPOSED, never the console or the API;
 * - the origin of path-based URLs (SANDBOX_PREVIEW_PATH_ORIGIN): `/v1/sandboxes/:id/ports/:port/…`
 *   (prefix stripped, sent on as X-Forwarded-Prefix), and 404 PREVIEW_ORIGIN_ONLY for anything else;
 * - any other host: the API and the console, where the path-based form is not served.
 *
 * The Worker only says whether the caller carried the API token, and hands the request (streaming
 * body, WebSocket upgrade) to the Durable Object's fetch handler.
 */
import type { MiddlewareHandler } from "hono";
import { ERROR_CODES, errorBody, type ErrorCode } from "../../protocol/errors.ts";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import type { Env } from "../env.ts";
import { portProxyRequest } from "../rpc/ports.ts";
import { isPathPreviewOrigin, previewHostTarget, previewSettings } from "../rpc/preview-urls.ts";
import { carriesApiToken } from "./auth.ts";
import { errorResponse } from "./errors.ts";
import type { ApiEnv } from "./types.ts";

const PATH_FORM = /^(\/v1\/sandboxes\/([^/]+)\/ports\/([^/]+))(\/.*)$/;

function refusal(code: ErrorCode, message: string, context?: Record<string, unknown>): Response {
  return Response.json(errorBody(code, message, context), { status: ERROR_CODES[code] });
}

async function forward(env: Env, sandboxId: string, portText: string, request: Request, prefix: string, rest: string): Promise<Response> {
  if (!sandboxIdSchema.safeParse(sandboxId).success) return refusal("INVALID_SANDBOX_ID", `invalid sandbox id ${JSON.stringify(sandboxId)}`);
  if (!/^\d{1,5}$/.test(portText)) return refusal("INVALID_PORT", `invalid port ${JSON.stringify(portText)}`, { port: portText });
  const apiAuthorized = await carriesApiToken(request.headers.get("authorization") ?? undefined, env.SANDBOX_API_TOKEN);
  const stub = env.Sandbox.get(env.Sandbox.idFromName(sandboxId));
  return stub.fetch(portProxyRequest(request, { port: Number(portText), rest, prefix, apiAuthorized }));
}

/** A response when the request is preview-port traffic by its Host (or refused as such), else undefined: the API's. */
export function previewPortDoor(request: Request, env: Env): Response | Promise<Response> | undefined {
  const settings = previewSettings(env);
  const url = new URL(request.url);
  const target = previewHostTarget(request.headers.get("host") ?? url.host, settings);
  if (target === null) return refusal("PORT_NOT_EXPOSED", `no exposed port at ${url.host}`);
  if (target) return forward(env, target.sandboxId, String(target.port), request, "", url.pathname + url.search);
  if (!isPathPreviewOrigin(url, settings)) return undefined;
  const match = PATH_FORM.exec(url.pathname);
  if (!match) {
    return refusal("PREVIEW_ORIGIN_ONLY", "this origin serves preview ports only (/v1/sandboxes/:id/ports/:port/…); the API and the console are on the service's own origin");
  }
  return forward(env, decodeURIComponent(match[2]!), match[3]!, request, match[1]!, match[4]! + url.search);
}

/**
 * On the API's origin the path-based form is not served (a page there would share the console's
 * origin): a clear 404 ahead of the bearer auth, instead of a 401 for a URL that can never work.
 */
export function noPathPreviews(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (!PATH_FORM.test(new URL(c.req.url).pathname)) return next();
    return errorResponse(c, "NOT_FOUND", "preview ports are not served on the API's origin: open the URL exposePort returned (a host of the port's own)");
  };
}
