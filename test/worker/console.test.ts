/**
 * The web console's switch and files in workerd: off unless SANDBOX_CONSOLE is "on" (every console
 * path 404 then), and when on, our pages from the assets and the third-party files from node_modules.
 * The console working in a browser is test/stack/console-browser.test.ts.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import type { Env } from "../../src/env.ts";

const app = createApp();

function get(path: string, settings: Partial<Env>, headers: HeadersInit = {}): Promise<Response> {
  return Promise.resolve(app.fetch(new Request(`http://sandbox.test${path}`, { headers }), { ...(env as Env), ...settings }, createExecutionContext()));
}

const PATHS = ["/", "/v1/docs", "/console/app.js", "/console/style.css", "/console/vendor/xterm.mjs", "/console/vendor/swagger-ui-bundle.js"];

describe("web console", () => {
  it("is off by default: every console path is 404 NOT_FOUND, the API is unchanged", async () => {
    expect((env as Env).SANDBOX_CONSOLE).toBeUndefined();
    for (const path of PATHS) {
      for (const settings of [{}, { SANDBOX_CONSOLE: "off" }, { SANDBOX_CONSOLE: "yes" }]) {
        const response = await get(path, settings);
        expect(response.status, `${path} ${JSON.stringify(settings)}`).toBe(404);
        expect(await response.json()).toMatchObject({ code: "NOT_FOUND" });
      }
    }
    expect((await get("/v1/openapi.json", {})).status).toBe(200);
    expect(await (await get("/v1", {})).json()).toMatchObject({ openapi: "/v1/openapi.json", docs: "/v1/docs" });
  });

  it("when on, serves the console page, the docs page and their own files from the assets", async () => {
    const page = await get("/", { SANDBOX_CONSOLE: "on" });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/console/app.js"></script>');

    const docs = await get("/v1/docs", { SANDBOX_CONSOLE: "on" });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("/console/vendor/swagger-ui-bundle.js");

    const script = await get("/console/app.js", { SANDBOX_CONSOLE: "on" });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    const etag = script.headers.get("etag");
    expect(etag).toBeTruthy();
    expect((await get("/console/app.js", { SANDBOX_CONSOLE: "on" }, { "if-none-match": etag! })).status).toBe(304);

    expect((await get("/console/nothing-here.js", { SANDBOX_CONSOLE: "on" })).status).toBe(404);
    expect((await get("/console/index.html", { SANDBOX_CONSOLE: "on" })).status).toBe(404);
  });

  it("when on, serves the third-party files from node_modules, and no others", async () => {
    const xterm = await get("/console/vendor/xterm.mjs", { SANDBOX_CONSOLE: "on" });
    expect(xterm.status).toBe(200);
    expect(xterm.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await xterm.text()).toContain("as Terminal}");

    const swagger = await get("/console/vendor/swagger-ui-bundle.js", { SANDBOX_CONSOLE: "on" });
    expect(swagger.status).toBe(200);
    expect(await swagger.text()).toContain("SwaggerUIBundle");

    const css = await get("/console/vendor/swagger-ui.css", { SANDBOX_CONSOLE: "on" });
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain(".swagger-ui");

    expect((await get("/console/vendor/package.json", { SANDBOX_CONSOLE: "on" })).status).toBe(404);
  });
});
