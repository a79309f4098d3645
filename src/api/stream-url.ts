/**
 * Signed stream URLs: the Worker mints them for a caller that holds the API token and accepts them
 * in place of the token, for exactly the stream they name. A browser's `EventSource` and `WebSocket`
 * cannot send an Authorization header, so the grant travels in the query: `expires` (Unix seconds)
 * and `signature`, an HMAC-SHA256 over the method, the path (which names the sandbox and the
 * stream), the expiry and the grant's claims (STREAM_URL_CLAIMS: the run of the process it reads,
 * a terminal socket's mode), which ride in the query too. Other query parameters (`since`, byte
 * offsets) are left unsigned on purpose: they only choose where in the granted stream reading starts.
 *
 * The key is derived (HKDF) from SANDBOX_API_TOKEN rather than taken from a secret of its own: no
 * second secret to configure and keep in step, rotating the token revokes every URL minted with it,
 * and the derivation's label keeps the key from being usable as, or revealing, the token itself.
 */
import type { Context } from "hono";
import type { ErrorCode } from "../../protocol/errors.ts";
import { STREAM_URL_CLAIMS, STREAM_URL_LIMITS, type StreamUrl, type StreamUrlClaims } from "../../protocol/stream-url.ts";
import type { ApiEnv } from "./types.ts";

/** The query parameters a signed URL adds. */
export const STREAM_URL_PARAMS = { expires: "expires", signature: "signature" } as const;

/** The one stream a URL grants: an HTTP method and a path under /v1/sandboxes/:id. */
export interface StreamTarget {
  method: "GET";
  path: string;
  /** `ws` for a WebSocket route: the URL gets the ws:/wss: scheme a browser's WebSocket wants. */
  scheme: "http" | "ws";
  /** Signed along with the path: what exactly of the stream the URL grants. */
  claims?: StreamUrlClaims;
}

const segment = encodeURIComponent;

/** The streams a URL can be minted for, spelled the way the routes in ./routes/ match them. */
export const streamTargets = {
  processLogs: (sandboxId: string, processId: string, run: string): StreamTarget => ({
    method: "GET",
    path: `/v1/sandboxes/${segment(sandboxId)}/processes/${segment(processId)}/logs/stream`,
    scheme: "http",
    claims: { run },
  }),
  execEvents: (sandboxId: string, processId: string, run: string): StreamTarget => ({
    method: "GET",
    path: `/v1/sandboxes/${segment(sandboxId)}/exec/${segment(processId)}/stream`,
    scheme: "http",
    claims: { run },
  }),
  terminalSocket: (sandboxId: string, terminalId: string, mode?: "view"): StreamTarget => ({
    method: "GET",
    path: `/v1/sandboxes/${segment(sandboxId)}/terminals/${segment(terminalId)}/ws`,
    scheme: "ws",
    ...(mode === undefined ? {} : { claims: { mode } }),
  }),
};

/** A signed URL for `target` on the origin the request came to, good for `ttlSeconds`. */
export async function mintStreamUrl(c: Context<ApiEnv>, target: StreamTarget, ttlSeconds: number = STREAM_URL_LIMITS.defaultTtlSeconds): Promise<StreamUrl> {
  const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
  const token = c.env.SANDBOX_API_TOKEN;
  // requireToken let the caller in, so there is a token; never sign with a blank key.
  if (!token) throw new Error("stream URLs are minted only behind requireToken");
  const claims = target.claims ?? {};
  const signature = await sign(token, message(target.method, target.path, String(expires), claims));
  const url = new URL(target.path, new URL(c.req.url).origin);
  if (target.scheme === "ws") url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const name of STREAM_URL_CLAIMS) if (claims[name] !== undefined) url.searchParams.set(name, claims[name]);
  url.searchParams.set(STREAM_URL_PARAMS.expires, String(expires));
  url.searchParams.set(STREAM_URL_PARAMS.signature, base64url(signature));
  return { url: url.href, expiresAt: new Date(expires * 1000).toISOString() };
}

/** Whether a request comes with a stream signature (and so asks to be let in by it). */
export function carriesStreamSignature(url: URL): boolean {
  return url.searchParams.has(STREAM_URL_PARAMS.signature) || url.searchParams.has(STREAM_URL_PARAMS.expires);
}

export interface StreamUrlRefusal {
  code: Extract<ErrorCode, "STREAM_URL_INVALID" | "STREAM_URL_EXPIRED">;
  message: string;
}

/** The claims a URL carries (signed, once its signature is checked). */
export function streamUrlClaims(url: URL): StreamUrlClaims {
  const claims: StreamUrlClaims = {};
  for (const name of STREAM_URL_CLAIMS) {
    const value = url.searchParams.get(name);
    if (value !== null) claims[name] = value;
  }
  return claims;
}

/**
 * Why a signed request is refused, or undefined when its signature grants exactly this method and
 * path and has not expired. The signature is checked before the expiry, so an expiry that was
 * tampered with is invalid, never "expired".
 */
export async function checkStreamSignature(token: string, method: string, url: URL): Promise<StreamUrlRefusal | undefined> {
  const expires = url.searchParams.get(STREAM_URL_PARAMS.expires) ?? "";
  const given = fromBase64url(url.searchParams.get(STREAM_URL_PARAMS.signature) ?? "");
  if (!/^\d{1,12}$/.test(expires) || given === undefined) {
    return { code: "STREAM_URL_INVALID", message: "Signed stream URL is malformed: it needs `expires` and `signature` as minted" };
  }
  const expected = await sign(token, message(method, url.pathname, expires, streamUrlClaims(url)));
  if (!constantTimeEqual(given, expected)) {
    return { code: "STREAM_URL_INVALID", message: `Signed stream URL does not grant ${method} ${url.pathname}` };
  }
  if (Number(expires) * 1000 <= Date.now()) {
    return { code: "STREAM_URL_EXPIRED", message: `Signed stream URL expired at ${new Date(Number(expires) * 1000).toISOString()}: mint a new one` };
  }
  return undefined;
}

function message(method: string, path: string, expires: string, claims: StreamUrlClaims): Uint8Array {
  const signed = STREAM_URL_CLAIMS.flatMap((name) => (claims[name] === undefined ? [] : [`\n${name}=${claims[name]}`])).join("");
  return new TextEncoder().encode(`stream-url v1\n${method}\n${path}\n${expires}${signed}`);
}

let cachedKey: { token: string; key: Promise<CryptoKey> } | undefined;

function signingKey(token: string): Promise<CryptoKey> {
  if (cachedKey?.token !== token) cachedKey = { token, key: deriveKey(token) };
  return cachedKey.key;
}

async function deriveKey(token: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(token), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("edge-sandbox stream URL signing key v1") },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
}

async function sign(token: string, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(token), data));
}

/** Compares every byte whatever the first difference, so the time taken says nothing about the expected signature. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes of an unpadded base64url string, or undefined when it is not one. */
function fromBase64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
