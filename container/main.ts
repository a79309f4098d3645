/**
 * `npm run container`: the container process server as a program. PORT (default 3000), HOST
 * (default 127.0.0.1; the image sets 0.0.0.0), WORKSPACE (default .sandbox/workspace),
 * SANDBOX_HOME (HOME of commands; default the workspace).
 */
import { sandboxOptionsFromEnv } from "./sandbox/options.ts";
import { startServer } from "./server.ts";

const server = await startServer({
  // SANDBOX_ISOLATION, SANDBOX_ALLOW_NETWORK, SANDBOX_READ_ONLY_PATHS, … (protocol/isolation.ts)
  ...sandboxOptionsFromEnv(process.env),
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST || "127.0.0.1",
  workspace: process.env.WORKSPACE || ".sandbox/workspace",
  ...(process.env.SANDBOX_HOME ? { home: process.env.SANDBOX_HOME } : {}),
});
console.log(`container server listening on ${server.url} (workspace ${server.workspace})`);

// One bad request must not take every sandbox process down with it: log and keep serving.
process.on("uncaughtException", (error) => console.error("uncaught exception:", error));
process.on("unhandledRejection", (error) => console.error("unhandled rejection:", error));

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void server.close().finally(() => process.exit(0));
  });
}
