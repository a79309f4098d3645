/**
 * What a preview port's answer may not do to the browser, whatever the program behind it sends:
 *
 * - widen a service worker's scope: `Service-Worker-Allowed` is removed from every answer, so a
 *   worker's scope is at most its script's folder (inside the port's origin, or its path prefix);
 *   a worker script that asks for a scope outside the port is refused outright (403
 *   SERVICE_WORKER_SCOPE_REFUSED), so the registration fails where the page can see it;
 * - redirect off the host through a path: a `Location` that is a path only in looks (`//host/…`,
 *   `/\host/…`) is made a path on this host. Absolute URLs (`https://…`) are the program's own choice.
 */
import { ERROR_CODES, errorBody } from "../../protocol/errors.ts";
import type { PortRequestParts } from "../rpc/ports.ts";

const SERVICE_WORKER_ALLOWED = "service-worker-allowed";

/**
 * A location as a browser would read it, kept on this host: one that starts with two slashes or
 * backslashes (after the tabs, newlines and leading spaces a URL parser drops) is a path here.
 */
export function localLocation(location: string): string {
  const parsed = location.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+/, "");
  return /^[/\\]{2}/.test(parsed) ? `/${parsed.replace(/^[/\\]+/, "")}` : location;
}

/** Whether a scope path stays inside the port: under its prefix (path-based), anywhere on its own origin (host-based). */
function insidePort(scopePath: string, prefix: string): boolean {
  return prefix === "" || scopePath.startsWith(`${prefix}/`);
}

/** The port's answer as it goes to the caller (see above). */
export function guardedPortResponse(parts: PortRequestParts, request: Request, response: Response): Response {
  if (response.status === 101) return response;
  const headers = new Headers(response.headers);
  const allowed = headers.get(SERVICE_WORKER_ALLOWED);
  headers.delete(SERVICE_WORKER_ALLOWED);
  if (allowed !== null && request.headers.get("service-worker") === "script") {
    // The browser resolves the header against the script's URL as it sees it (prefix included).
    const script = new URL(`${parts.prefix}${parts.rest.split("?")[0]!}`, "http://preview.invalid");
    const scope = new URL(allowed, script).pathname;
    if (!insidePort(scope, parts.prefix)) {
      void response.body?.cancel();
      const body = errorBody("SERVICE_WORKER_SCOPE_REFUSED", `a service worker of port ${parts.port} may not control ${scope}: only the port's own pages`, {
        port: parts.port,
        scope,
      });
      return Response.json(body, { status: ERROR_CODES.SERVICE_WORKER_SCOPE_REFUSED });
    }
  }
  const location = headers.get("location");
  if (location !== null) headers.set("location", localLocation(location));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
