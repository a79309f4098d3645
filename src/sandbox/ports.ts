/**
 * The Durable Object's preview ports: the registry of exposed ports and their tokens (kept in the
 * Durable Object's storage), the access decision for each proxied request, and the request that goes
 * on to the container server's proxy route.
 *
 * A token is the port's until it is unexposed, rotated (exposed again with another token) or the
 * sandbox destroyed; a container restart keeps it. But an exposure is served only by the container
 * it was made in: after a sleep, a crash or a restart the URL answers 410 STALE_PREVIEW_URL until the
 * port is exposed again (the same URL works again). So traffic for a URL never starts a container.
 *
 * Access to a private port: the URL's `?token=` (a browser's navigation is answered with a redirect
 * to the same URL without it and the token as a cookie scoped to the port's path; a program's request
 * is served as it is), then the cookie; or the API token, which the Worker checked. Everything here
 * is decided from storage and whether a container runs: a request for a port that is not exposed,
 * without its token, or for an earlier container never wakes one. Staleness is told only to a caller
 * who holds the port's credential.
 */
import { exposePortRequestSchema, PORT_HEADERS, PORT_PROXY_ROUTES, previewPortSchema, type ExposedPort } from "../../protocol/preview-ports.ts";
import { errorFromCode } from "../rpc/errors.ts";
import { PORT_INTERNAL_HEADERS, PORT_TOKEN_COOKIE, PORT_TOKEN_PARAM, previewUrl, serviceOrigin, type ExposePortOptions, type PortRequestParts } from "../rpc/ports.ts";
import type { PreviewSettings } from "../rpc/preview-urls.ts";
import { localLocation } from "./port-guards.ts";
import type { PortFetcher } from "./container-api.ts";
import { parseRequest } from "./request.ts";

const REGISTRY_KEY = "preview-ports";

interface StoredPort {
  port: number;
  name?: string;
  public: boolean;
  token: string;
  /** When the port was first exposed; later exposures keep it (a Bridge tunnel's id is made from it). */
  exposedAt: string;
  /** The container generation (its instance id) the port was last exposed in: the one that serves it. */
  activeIn?: string;
}

/** The instance id of the running container, or undefined when none runs (never starts one). */
export type RunningGeneration = () => Promise<string | undefined>;

export interface UrlContext {
  sandboxId: string;
  settings: PreviewSettings;
}

function invalidPort(value: unknown): never {
  const result = previewPortSchema.safeParse(value);
  const message = result.success ? "invalid port" : (result.error.issues[0]?.message ?? "invalid port");
  throw errorFromCode("INVALID_PORT", message, { context: { port: value } });
}

function checkedPort(value: unknown): number {
  const result = previewPortSchema.safeParse(value);
  return result.success ? result.data : invalidPort(value);
}

function notExposed(port: number): Error {
  return errorFromCode("PORT_NOT_EXPOSED", `port ${port} is not exposed`, { context: { port } });
}

/** 256 random bits, URL-safe. */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function sameToken(given: string, expected: string): Promise<boolean> {
  const digest = async (text: string) => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/** 410 STALE_PREVIEW_URL: the port's exposure was made in an earlier container. */
export function staleUrl(port: number): Error {
  return errorFromCode("STALE_PREVIEW_URL", `port ${port} was exposed in an earlier container of this sandbox (it slept, stopped or restarted): expose it again`, {
    context: { port },
  });
}

function exposedPortOf(stored: StoredPort, urls: UrlContext, origin: string | undefined): ExposedPort {
  const url = previewUrl({
    sandboxId: urls.sandboxId,
    port: stored.port,
    ...(stored.public ? {} : { token: stored.token }),
    ...(origin === undefined ? {} : { origin }),
    settings: urls.settings,
  });
  return { port: stored.port, url, ...(stored.name === undefined ? {} : { name: stored.name }), public: stored.public, exposedAt: stored.exposedAt, status: "active" };
}

export class PortRegistry {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  async #all(): Promise<Record<string, StoredPort>> {
    return (await this.#storage.get<Record<string, StoredPort>>(REGISTRY_KEY)) ?? {};
  }

  /**
   * Exposes the port in the running container (`runtime` starts one when needed and names it). A port
   * already exposed keeps its token unless another is given (a rotation: the old one stops working),
   * and is served again by this container. Bad input is refused before any container starts.
   */
  async expose(port: number, options: ExposePortOptions, urls: UrlContext, runtime: () => Promise<string>): Promise<ExposedPort> {
    checkedPort(port);
    const { origin: givenOrigin, hostname, ...rest } = options ?? {};
    const origin = serviceOrigin({ ...(givenOrigin === undefined ? {} : { origin: givenOrigin }), ...(hostname === undefined ? {} : { hostname }) });
    const request = parseRequest(exposePortRequestSchema, { ...rest, port }, "exposePort options");
    // The URL first: a port is not exposed where no URL of its own origin can be made for it.
    previewUrl({ sandboxId: urls.sandboxId, port, ...(origin === undefined ? {} : { origin }), settings: urls.settings });
    if (request.token !== undefined) tokenFree(await this.#all(), port, request.token);
    const activeIn = await runtime();
    const all = await this.#all();
    const existing = all[String(port)];
    const token = request.token ?? existing?.token ?? newToken();
    tokenFree(all, port, token);
    const name = request.name ?? existing?.name;
    const stored: StoredPort = {
      port,
      ...(name === undefined ? {} : { name }),
      public: request.public ?? existing?.public ?? false,
      token,
      exposedAt: existing?.exposedAt ?? new Date().toISOString(),
      activeIn,
    };
    await this.#storage.put(REGISTRY_KEY, { ...all, [String(port)]: stored });
    return exposedPortOf(stored, urls, origin);
  }

  /** Its URL and token stop working; a port that is not exposed is no error (nothing to revoke). */
  async unexpose(port: number): Promise<void> {
    checkedPort(port);
    const all = await this.#all();
    if (!all[String(port)]) return;
    delete all[String(port)];
    await this.#storage.put(REGISTRY_KEY, all);
  }

  /** Every port's token stops working (the sandbox is destroyed): its URLs answer 404 from now on. */
  async revokeAll(): Promise<void> {
    await this.#storage.delete(REGISTRY_KEY);
  }

  /** The ports the running container serves (`current`: its instance id); none while no container runs. */
  async list(urls: UrlContext, origin: string | undefined, current: string | undefined): Promise<ExposedPort[]> {
    if (current === undefined) return [];
    return Object.values(await this.#all())
      .filter((stored) => stored.activeIn === current)
      .sort((a, b) => a.port - b.port)
      .map((stored) => exposedPortOf(stored, urls, origin));
  }

  /**
   * Whether the request may reach the port: `answer` is what to give instead of going on (the
   * redirect that trades the URL's token for a cookie); `isPublic` says whether `?token=` is the
   * app's own. Throws the coded refusal: the credential is checked first, then whether the running
   * container is the one the port was exposed in (`runtime` never starts one).
   */
  async admit(parts: PortRequestParts, request: Request, runtime: RunningGeneration): Promise<{ answer?: Response; isPublic: boolean }> {
    const stored = (await this.#all())[String(parts.port)];
    if (!stored) throw notExposed(parts.port);
    const admitted = await this.#authorize(stored, parts, request);
    const current = await runtime();
    if (current === undefined || current !== stored.activeIn) throw staleUrl(parts.port);
    return admitted;
  }

  /** Whether the caller holds the port's credential (see admit). */
  async #authorize(stored: StoredPort, parts: PortRequestParts, request: Request): Promise<{ answer?: Response; isPublic: boolean }> {
    if (stored.public) return { isPublic: true };
    if (parts.apiAuthorized) return { isPublic: false };
    const url = new URL(request.url);
    const fromQuery = url.searchParams.get(PORT_TOKEN_PARAM);
    if (fromQuery !== null) {
      if (!(await sameToken(fromQuery, stored.token))) throw tokenInvalid(parts.port);
      // A browser opening the URL trades the token for a cookie, so the address bar and the app's own
      // links go on without it; a program (fetch, curl) keeps no cookies and is served at once.
      if (!isNavigation(request)) return { isPublic: false };
      return { answer: tokenRedirect(parts, url, stored.token, request.headers.get(PORT_HEADERS.forwardedProto) === "https"), isPublic: false };
    }
    const fromCookie = cookieValue(request.headers.get("cookie"), PORT_TOKEN_COOKIE);
    if (fromCookie === undefined) {
      throw errorFromCode("PORT_TOKEN_REQUIRED", `port ${parts.port} is private: open the URL exposePort gave (with its token) or send the API token`, {
        context: { port: parts.port },
      });
    }
    if (!(await sameToken(fromCookie, stored.token))) throw tokenInvalid(parts.port);
    return { isPublic: false };
  }
}

/** A browser loading a page (its Fetch Metadata says so: mode `navigate`, destination `document`), not a program's request. */
function isNavigation(request: Request): boolean {
  return request.headers.get("sec-fetch-mode") === "navigate" || request.headers.get("sec-fetch-dest") === "document";
}

/** Throws PREVIEW_TOKEN_IN_USE when another port of the sandbox has `token`. */
function tokenFree(all: Record<string, StoredPort>, port: number, token: string): void {
  const holder = Object.values(all).find((stored) => stored.port !== port && stored.token === token);
  if (holder) {
    throw errorFromCode("PREVIEW_TOKEN_IN_USE", `port ${holder.port} already has this token: choose another for port ${port}`, { context: { port, otherPort: holder.port } });
  }
}

function tokenInvalid(port: number): Error {
  return errorFromCode("PORT_TOKEN_INVALID", `the token is not port ${port}'s (it was unexposed, or the URL is wrong)`, { context: { port } });
}

/**
 * The same URL without the token, and the token as a cookie for the port's path (or its host, in the
 * host-based form). The location stays on this host: a path like `//evil.example/x` is not let become
 * a redirect to another one.
 */
function tokenRedirect(parts: PortRequestParts, url: URL, token: string, secure: boolean): Response {
  url.searchParams.delete(PORT_TOKEN_PARAM);
  const path = parts.rest.split("?")[0]!;
  const location = localLocation(`${parts.prefix}${path}${url.search}`);
  const cookie = [`${PORT_TOKEN_COOKIE}=${token}`, `Path=${parts.prefix || "/"}`, "HttpOnly", "SameSite=Lax", ...(secure ? ["Secure"] : [])].join("; ");
  return new Response(null, { status: 302, headers: { location, "set-cookie": cookie, "cache-control": "no-store" } });
}

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of header?.split(";") ?? []) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The Cookie header without the port's token cookie (the app never sees it). */
function withoutTokenCookie(header: string | null): string | undefined {
  const kept = (header ?? "")
    .split(";")
    .filter((part) => part.trim() !== "" && part.slice(0, part.indexOf("=")).trim() !== PORT_TOKEN_COOKIE)
    .map((part) => part.trim());
  return kept.length === 0 ? undefined : kept.join("; ");
}

/**
 * The request to the container server's proxy route. The caller's Authorization travels under
 * PORT_HEADERS.carriedAuthorization (the hop's own is the container server's), except the API
 * token, which is the service's and not the app's. A private port's `?token=` is the service's too.
 */
export function containerPortRequest(parts: PortRequestParts, request: Request, isPublic: boolean): Request {
  const headers = new Headers(request.headers);
  for (const name of PORT_INTERNAL_HEADERS) headers.delete(name);
  const authorization = headers.get("authorization");
  headers.delete("authorization");
  if (authorization !== null && !parts.apiAuthorized) headers.set(PORT_HEADERS.carriedAuthorization, authorization);
  const cookie = withoutTokenCookie(headers.get("cookie"));
  if (cookie === undefined) headers.delete("cookie");
  else headers.set("cookie", cookie);
  const url = new URL(request.url);
  if (!isPublic) url.searchParams.delete(PORT_TOKEN_PARAM);
  const path = parts.rest.split("?")[0]!;
  return new Request(`http://container${PORT_PROXY_ROUTES.proxy(parts.port, path)}${url.search}`, {
    method: request.method,
    headers,
    body: request.body,
    redirect: "manual",
  });
}

/** Sends the proxied request to the container server (which answers PORT_NOT_LISTENING itself). */
export function forwardToPort(port: PortFetcher, parts: PortRequestParts, request: Request, isPublic: boolean): Promise<Response> {
  return port.fetch(containerPortRequest(parts, request, isPublic));
}
