/**
 * Types of the third-party browser files src/console/vendor.ts imports: the Text module rule in
 * wrangler.toml makes each one's default export its source text.
 */
declare module "@xterm/xterm/lib/xterm.mjs" {
  const text: string;
  export default text;
}
declare module "@xterm/xterm/css/xterm.css" {
  const text: string;
  export default text;
}
declare module "@xterm/addon-fit/lib/addon-fit.mjs" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const text: string;
  export default text;
}
