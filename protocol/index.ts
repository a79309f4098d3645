export * from "./errors.ts";
export * from "./limits.ts";
export * from "./process.ts";
export * from "./events.ts";
export * from "./sse.ts";
export * from "./sandbox.ts";
export * from "./runtime.ts";
