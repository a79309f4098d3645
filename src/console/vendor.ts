/**
 * The third-party browser files the web console and the API reference load: xterm.js with its fit
 * addon, and Swagger UI. They are imported from node_modules as text (the Text module rule in
 * wrangler.toml), so the repository holds none of their minified code and the Worker serves exactly
 * the versions package.json pins, with no build step.
 */
import fitAddon from "@xterm/addon-fit/lib/addon-fit.mjs";
import xtermCss from "@xterm/xterm/css/xterm.css";
import xterm from "@xterm/xterm/lib/xterm.mjs";
import swaggerUi from "swagger-ui-dist/swagger-ui-bundle.js";
import swaggerUiCss from "swagger-ui-dist/swagger-ui.css";

export interface VendorFile {
  body: string;
  contentType: string;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** By the name they have under /console/vendor/. */
export const VENDOR_FILES: ReadonlyMap<string, VendorFile> = new Map([
  ["xterm.mjs", { body: xterm, contentType: JS }],
  ["xterm.css", { body: xtermCss, contentType: CSS }],
  ["addon-fit.mjs", { body: fitAddon, contentType: JS }],
  ["swagger-ui-bundle.js", { body: swaggerUi, contentType: JS }],
  ["swagger-ui.css", { body: swaggerUiCss, contentType: CSS }],
]);
