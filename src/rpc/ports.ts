/**
 * Preview ports as they cross between the Worker, callers and the Sandbox Durable Object: the options
 * of exposePort, the URL forms of an exposed port (decided here once, built by the Durable Object and
 * read by the Worker), and the internal request a proxied call becomes.
 *
 * URL forms: path-based on the service's own origin, `/v1/sandboxes/{id}/ports/{port}/…`; and, where
 * the operator sets a preview domain, host-based, `https://{port}-{id}.{domain}/…`. A private port's
 * URL carries its token once, as `?token=`.
 *
 * Workers RPC cannot carry a WebSocket or a streaming request body, so a proxied request reaches the
 * Durable Object through its fetch handler at `/__sandbox/ports/{port}{rest}`, with what the Worker
 * knows in headers it sets itself (never taken from the caller as they came).
 */
import { PORT_HEADERS, type ExposedPort, type ExposePortRequest } from "../../protocol/preview-ports.ts";

export type { ExposedPort };

/** exposePort's options: a `name`, `public: true` to need no token, and the `origin` path-based URLs start with. */
export interface ExposePortOptions extends Omit<ExposePortRequest, "port"> {
  /** The service's origin (e.g. `https://sandbox.example.com`); without it a path-based URL is relative. */
  origin?: string;
}

export interface ExposedPortsOptions {
  origin?: string;
}

export interface UnexposePortResult {
  port: number;
}

/** The query parameter a private port's URL carries its token in, once. */
export const PORT_TOKEN_PARAM = "token";
/** The cookie the token is kept in after the first request, scoped to the port's path (or host). */
export const PORT_TOKEN_COOKIE = "sandbox_port_token";

/** Set by the Worker on the internal request when the caller carried the API token. */
const API_AUTHORIZED_HEADER = "x-sandbox-api-authorized";
const INTERNAL_PATH = /^\/__sandbox\/ports\/(\d{1,5})(\/.*)?$/;

/** A sandbox id usable as part of a host name (one DNS label with its port, lowercase). */
const HOST_SAFE_ID = /^[a-z0-9](?:[a-z0-9-]{0,50}[a-z0-9])?$/;
const PREVIEW_HOST = /^(\d{1,5})-([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\.(.+)$/;

/** The path prefix of a port in the path-based form. */
export function portPathPrefix(sandboxId: string, port: number): string {
  return `/v1/sandboxes/${encodeURIComponent(sandboxId)}/ports/${port}`;
}

/** The URL handed out for an exposed port: host-based where a preview domain is set and the id fits a host name. */
export function previewUrl(options: { sandboxId: string; port: number; token?: string; origin?: string; previewDomain?: string }): string {
  const { sandboxId, port, token, previewDomain } = options;
  const base =
    previewDomain && HOST_SAFE_ID.test(sandboxId)
      ? `https://${port}-${sandboxId}.${previewDomain}/`
      : `${(options.origin ?? "").replace(/\/+$/, "")}${portPathPrefix(sandboxId, port)}/`;
  return token === undefined ? base : `${base}?${PORT_TOKEN_PARAM}=${encodeURIComponent(token)}`;
}

/** `{port}-{id}.{domain}` (the Host of a request, port suffix ignored) → the sandbox and port, when it is one. */
export function parsePreviewHost(host: string | null, previewDomain: string | undefined): { sandboxId: string; port: number } | undefined {
  if (!host || !previewDomain) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, "");
  const match = PREVIEW_HOST.exec(name);
  if (!match || match[3] !== previewDomain.toLowerCase()) return undefined;
  return { port: Number(match[1]), sandboxId: match[2]! };
}

export interface PortRequestParts {
  port: number;
  /** The path after the prefix, from its `/`, with the query. */
  rest: string;
  /** What the caller's URL had before `rest` (empty for the host-based form). */
  prefix: string;
  /** Whether the caller carried the API token (the Worker checked it). */
  apiAuthorized: boolean;
}

/** The Worker's internal request to the Durable Object for a proxied call; the body streams through. */
export function portProxyRequest(request: Request, parts: PortRequestParts): Request {
  const url = new URL(request.url);
  const headers = new Headers(request.headers);
  headers.delete(API_AUTHORIZED_HEADER);
  if (parts.apiAuthorized) headers.set(API_AUTHORIZED_HEADER, "1");
  headers.set(PORT_HEADERS.forwardedPrefix, parts.prefix);
  headers.set(PORT_HEADERS.forwardedHost, url.host);
  headers.set(PORT_HEADERS.forwardedProto, url.protocol.replace(":", ""));
  headers.delete(PORT_HEADERS.carriedAuthorization);
  return new Request(`http://sandbox/__sandbox/ports/${parts.port}${parts.rest}`, {
    method: request.method,
    headers,
    body: request.body,
    redirect: "manual",
  });
}

/** The parts of an internal port request received by the Durable Object (undefined: another request). */
export function portRequestParts(request: Request): PortRequestParts | undefined {
  const url = new URL(request.url);
  const match = INTERNAL_PATH.exec(url.pathname);
  if (!match) return undefined;
  return {
    port: Number(match[1]),
    rest: (match[2] ?? "/") + url.search,
    prefix: request.headers.get(PORT_HEADERS.forwardedPrefix) ?? "",
    apiAuthorized: request.headers.get(API_AUTHORIZED_HEADER) === "1",
  };
}

/** The internal header, for the Durable Object to remove before the request goes on. */
export const PORT_INTERNAL_HEADERS = [API_AUTHORIZED_HEADER] as const;
