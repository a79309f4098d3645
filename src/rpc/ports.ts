/**
 * Preview ports as they cross between the Worker, callers and the Sandbox Durable Object: the options
 * of exposePort, the URL forms of an exposed port (decided here once, built by the Durable Object and
 * read by the Worker), and the internal request a proxied call becomes.
 *
 * URL forms (./preview-urls.ts): each port on an origin of its own, `{port}-{id}.{domain}` or
 * `{port}-{id}.localhost`; path-based only on an origin the operator names for them. A private
 * port's URL carries its token once, as `?token=`.
 *
 * Workers RPC cannot carry a WebSocket or a streaming request body, so a proxied request reaches the
 * Durable Object through its fetch handler at `/__sandbox/ports/{port}{rest}`, with what the Worker
 * knows in headers it sets itself (never taken from the caller as they came).
 */
import { PORT_HEADERS, type ExposedPort, type ExposePortRequest, type UnexposePortResult } from "../../protocol/preview-ports.ts";
import { errorFromCode } from "./errors.ts";
import { isLoopbackHostname, previewBaseUrl, type PreviewSettings } from "./preview-urls.ts";

export type { ExposedPort, UnexposePortResult };

/** exposePort's options: a `name`, `public: true` to need no token, and the service's `origin`. */
export interface ExposePortOptions extends Omit<ExposePortRequest, "port"> {
  /**
   * The service's origin, where callers reach its API (the HTTP API passes its own). Needed where
   * no preview domain is set: a loopback origin (e.g. `http://127.0.0.1:8787`) gives
   * `http://{port}-{id}.localhost:8787/` URLs.
   */
  origin?: string;
  /**
   * The service's host as Cloudflare's SDK names it (`example.com`, `localhost:8787`): its origin
   * where `origin` is not given (http on loopback, https elsewhere).
   */
  hostname?: string;
}

/** The service's origin from exposePort's options: `origin`, else the one `hostname` names. */
export function serviceOrigin(options: Pick<ExposePortOptions, "origin" | "hostname">): string | undefined {
  if (options.origin !== undefined || options.hostname === undefined) return options.origin;
  if (typeof options.hostname !== "string" || !/^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(options.hostname)) {
    throw errorFromCode("INVALID_REQUEST", `Invalid exposePort options: hostname: ${JSON.stringify(options.hostname)} is not a host name (with an optional port)`, {
      context: { hostname: options.hostname },
    });
  }
  const local = isLoopbackHostname(options.hostname.replace(/:\d+$/, ""));
  return `${local ? "http" : "https"}://${options.hostname}`;
}

/** getExposedPorts' options: the service's `origin`; or, as Cloudflare's SDK passes it, its hostname alone. */
export type ExposedPortsOptions = { origin?: string } | string;


/** The query parameter a private port's URL carries its token in, once. */
export const PORT_TOKEN_PARAM = "token";
/** The cookie the token is kept in after the first request, scoped to the port's path (or host). */
export const PORT_TOKEN_COOKIE = "sandbox_port_token";

/** Set by the Worker on the internal request when the caller carried the API token. */
const API_AUTHORIZED_HEADER = "x-sandbox-api-authorized";
const INTERNAL_PATH = /^\/__sandbox\/ports\/(\d{1,5})(\/.*)?$/;

/** The URL handed out for an exposed port (its form: ./preview-urls.ts), with the token of a private one. */
export function previewUrl(options: { sandboxId: string; port: number; token?: string; origin?: string; settings: PreviewSettings }): string {
  const base = previewBaseUrl(options.sandboxId, options.port, options.settings, options.origin);
  return options.token === undefined ? base : `${base}?${PORT_TOKEN_PARAM}=${encodeURIComponent(options.token)}`;
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
