/**
 * Where preview URLs live, decided here once: the Durable Object hands them out, the Worker routes
 * requests by them. A page behind a port is a program's, anyone's: it must never share an origin with
 * the console or the API, where it could register a service worker over them or read what they keep.
 * So every form is an origin the console and the API are never served on:
 *
 * - `https://{port}-{id}.{SANDBOX_PREVIEW_DOMAIN}/` where the operator sets a preview domain;
 * - `http://{port}-{id}.localhost:{port}/` when the service is reached on a loopback origin (browsers
 *   resolve every `*.localhost` name to loopback, with no DNS to set up);
 * - `{SANDBOX_PREVIEW_PATH_ORIGIN}/v1/sandboxes/{id}/ports/{port}/` only where the operator names an
 *   origin for path-based URLs, which then serves preview ports and nothing else.
 *
 * Host-based URLs need an id that can be a host name (one DNS label with its port, lowercase).
 */
import { errorFromCode } from "./errors.ts";

/** Every `*.localhost` name is loopback in browsers: preview hosts there need no setup. */
export const LOCAL_PREVIEW_DOMAIN = "localhost";

/** A sandbox id usable as part of a host name (one DNS label with its port, lowercase). */
const HOST_SAFE_ID = /^[a-z0-9](?:[a-z0-9-]{0,50}[a-z0-9])?$/;
/** The first label of a preview host: `{port}-{id}`. */
const PREVIEW_LABEL = /^(\d{1,5})-([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)$/;

/** The operator's preview settings (wrangler vars; see Env). */
export interface PreviewSettings {
  /** Host-based URLs are `{port}-{id}.{previewDomain}`. */
  previewDomain?: string;
  /** The one origin path-based URLs are served on (and nothing else is). */
  pathOrigin?: string;
}

export function previewSettings(env: { SANDBOX_PREVIEW_DOMAIN?: string; SANDBOX_PREVIEW_PATH_ORIGIN?: string }): PreviewSettings {
  return {
    ...(env.SANDBOX_PREVIEW_DOMAIN ? { previewDomain: env.SANDBOX_PREVIEW_DOMAIN.toLowerCase().replace(/^\.+|\.+$/g, "") } : {}),
    ...(env.SANDBOX_PREVIEW_PATH_ORIGIN ? { pathOrigin: new URL(env.SANDBOX_PREVIEW_PATH_ORIGIN).origin } : {}),
  };
}

/** The path prefix of a port in the path-based form. */
export function portPathPrefix(sandboxId: string, port: number): string {
  return `/v1/sandboxes/${encodeURIComponent(sandboxId)}/ports/${port}`;
}

/** localhost, any `*.localhost`, 127.0.0.0/8 or [::1]: an origin only this machine reaches. */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/**
 * The URL of an exposed port, without its token. `origin` is the service's own (where the caller
 * reached the API); a loopback one makes the port's URL `*.localhost` on the same port. Throws
 * SANDBOX_ID_NOT_HOST_SAFE or PREVIEW_DOMAIN_NOT_CONFIGURED where no form fits.
 */
export function previewBaseUrl(sandboxId: string, port: number, settings: PreviewSettings, origin: string | undefined): string {
  const hostSafe = HOST_SAFE_ID.test(sandboxId);
  if (settings.previewDomain && hostSafe) return `https://${port}-${sandboxId}.${settings.previewDomain}/`;
  if (settings.pathOrigin) return `${settings.pathOrigin}${portPathPrefix(sandboxId, port)}/`;
  const service = origin === undefined ? undefined : new URL(origin);
  const local = service !== undefined && isLoopbackHostname(service.hostname);
  if (hostSafe && local) return `${service.protocol}//${port}-${sandboxId}.${LOCAL_PREVIEW_DOMAIN}${service.port ? `:${service.port}` : ""}/`;
  if (!hostSafe && (settings.previewDomain || local)) {
    throw errorFromCode(
      "SANDBOX_ID_NOT_HOST_SAFE",
      `sandbox id ${JSON.stringify(sandboxId)} cannot be part of a host name, and preview URLs are host-based here: ` +
        "use an id of lowercase letters, digits and '-' (at most 52), or have the operator set SANDBOX_PREVIEW_PATH_ORIGIN",
      { context: { sandboxId, port } },
    );
  }
  throw errorFromCode(
    "PREVIEW_DOMAIN_NOT_CONFIGURED",
    origin === undefined
      ? "no preview URL can be made: pass the service's origin (a loopback one gives *.localhost URLs), or set SANDBOX_PREVIEW_DOMAIN"
      : `no preview URL can be made for ${service!.origin}: set SANDBOX_PREVIEW_DOMAIN (a wildcard domain routed to this Worker), or SANDBOX_PREVIEW_PATH_ORIGIN`,
    { context: { port } },
  );
}

/**
 * The port a request's Host names: `{sandboxId, port}` for `{port}-{id}.localhost` or
 * `{port}-{id}.{previewDomain}` (port suffix ignored); `null` for any other name under those
 * domains (it names no exposed port, and is never the console's or the API's); undefined otherwise.
 */
export function previewHostTarget(host: string, settings: PreviewSettings): { sandboxId: string; port: number } | null | undefined {
  const name = host.toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");
  for (const domain of [settings.previewDomain, LOCAL_PREVIEW_DOMAIN]) {
    if (!domain || !name.endsWith(`.${domain}`)) continue;
    const match = PREVIEW_LABEL.exec(name.slice(0, -(domain.length + 1)));
    return match ? { port: Number(match[1]), sandboxId: match[2]! } : null;
  }
  return undefined;
}

/** Whether a request came to the origin of path-based preview URLs. */
export function isPathPreviewOrigin(url: URL, settings: PreviewSettings): boolean {
  return settings.pathOrigin !== undefined && new URL(settings.pathOrigin).host === url.host;
}
