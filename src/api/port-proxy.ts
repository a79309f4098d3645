/**
 * Requests for a sandbox's preview port, in both URL forms: path-based,
 * `/v1/sandboxes/:id/ports/:port/…` (prefix stripped, sent on as X-Forwarded-Prefix), and host-based,
 * `<port>-<id>.<SANDBOX_PREVIEW_DOMAIN>` (recognised by the Worker entry from the Host header).
 *
 * They are let through ahead of the API's bearer auth: whether the caller may reach the port is the
 * Durable Object's decision (its registry holds the ports and their tokens). The Worker only says
 * whether the caller carried the API token, and hands the request (streaming body, WebSocket
 * upgrade) to the Durable Object's fetch handler.
 */
import type { MiddlewareHandler } from "hono";
import { errorBody } from "../../protocol/errors.ts";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import type { Env } from "../env.ts";
import { parsePreviewHost, portProxyRequest } from "../rpc/ports.ts";
import { carriesApiToken } from "./auth.ts";
import type { ApiEnv } from "./types.ts";

const PATH_FORM = /^(\/v1\/sandboxes\/([^/]+)\/ports\/([^/]+))(\/.*)$/;

async function forward(env: Env, sandboxId: string, portText: string, request: Request, prefix: string, rest: string): Promise<Response> {
  if (!sandboxIdSchema.safeParse(sandboxId).success) {
    return Response.json(errorBody("INVALID_SANDBOX_ID", `invalid sandbox id ${JSON.stringify(sandboxId)}`), { status: 400 });
  }
  if (!/^\d{1,5}$/.test(portText)) {
    return Response.json(errorBody("INVALID_PORT", `invalid port ${JSON.stringify(portText)}`, { port: portText }), { status: 400 });
  }
  const apiAuthorized = await carriesApiToken(request.headers.get("authorization") ?? undefined, env.SANDBOX_API_TOKEN);
  const stub = env.Sandbox.get(env.Sandbox.idFromName(sandboxId));
  return stub.fetch(portProxyRequest(request, { port: Number(portText), rest, prefix, apiAuthorized }));
}

/** The path-based form, mounted before the API's auth; other requests (e.g. DELETE /ports/:port) go on. */
export function pathPortProxy(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const match = PATH_FORM.exec(url.pathname);
    if (!match) return next();
    return forward(c.env, decodeURIComponent(match[2]!), match[3]!, c.req.raw, match[1]!, match[4]! + url.search);
  };
}

/** The host-based form: a response when the Host names a preview port, else undefined. */
export function hostPortProxy(request: Request, env: Env): Promise<Response> | undefined {
  const target = parsePreviewHost(request.headers.get("host") ?? new URL(request.url).host, env.SANDBOX_PREVIEW_DOMAIN);
  if (!target) return undefined;
  const url = new URL(request.url);
  return forward(env, target.sandboxId, String(target.port), request, "", url.pathname + url.search);
}
