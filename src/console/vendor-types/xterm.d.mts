/** Types of /console/vendor/xterm.mjs for the console's pages (tsconfig.console.json): xterm.js's own. */
export * from "@xterm/xterm";
