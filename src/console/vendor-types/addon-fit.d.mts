/** Types of /console/vendor/addon-fit.mjs for the console's pages (tsconfig.console.json): the fit addon's own. */
export * from "@xterm/addon-fit";
