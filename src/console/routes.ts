/**
 * The web console at / and the API reference at /v1/docs, with the files they load under /console/.
 * Off unless the SANDBOX_CONSOLE var is "on": a deployment shows no page it was not asked to, and
 * every path here answers 404 NOT_FOUND then. Our own page files come from the ASSETS binding
 * (console/), third-party ones from vendor.ts. The pages hold no secret: each call they make carries
 * the API token the user pastes.
 */
import { Hono, type Context } from "hono";
import type { ApiEnv } from "../api/types.ts";
import type { Env } from "../env.ts";
import { VENDOR_FILES } from "./vendor.ts";

/**
 * Scripts and styles only from this origin (Swagger UI sets inline styles), and calls only to it:
 * 'self' covers its ws:/wss: too, so a script that got in could not send the token elsewhere.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function consoleEnabled(env: Env): boolean {
  return env.SANDBOX_CONSOLE === "on";
}

/** The API's own 404 (app.ts), as for any path it has no route for. */
function notServed(c: Context<ApiEnv>): Response | Promise<Response> {
  return c.notFound();
}

function withPageHeaders(response: Response): Response {
  const out = new Response(response.body, response);
  out.headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  out.headers.set("X-Content-Type-Options", "nosniff");
  out.headers.set("Referrer-Policy", "no-referrer");
  return out;
}

/** One of our own files from console/, with the request's conditional headers (the assets answer 304 themselves). */
async function asset(c: Context<ApiEnv>, path: string): Promise<Response> {
  if (!consoleEnabled(c.env) || !c.env.ASSETS) return notServed(c);
  const response = await c.env.ASSETS.fetch(new Request(new URL(path, c.req.url), { headers: c.req.raw.headers }));
  if (response.status === 404) return notServed(c);
  return withPageHeaders(response);
}

export const consoleRoutes = new Hono<ApiEnv>()
  .get("/", (c) => asset(c, "/index.html"))
  .get("/v1/docs", (c) => asset(c, "/docs.html"))
  .get("/console/vendor/:file", (c) => {
    const file = VENDOR_FILES.get(c.req.param("file"));
    if (!consoleEnabled(c.env) || !file) return notServed(c);
    return withPageHeaders(new Response(file.body, { headers: { "Content-Type": file.contentType, "Cache-Control": "public, max-age=300" } }));
  })
  .get("/console/:file{[a-z0-9-]+\\.(?:js|css)}", (c) => asset(c, `/${c.req.param("file")}`));
