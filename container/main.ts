/**
 * `npm run container`: the container process server as a program. PORT (default 3000), HOST
 * (default 127.0.0.1; the image sets 0.0.0.0), WORKSPACE (default .sandbox/workspace),
 * SANDBOX_HOME (HOME of commands; default the workspace).
 *
 * Started from the TypeScript sources, it first re-executes itself on a type-stripped JS copy
 * (see boot/precompile.ts: a leaner process spawns faster). SANDBOX_PRECOMPILE=0 turns that off.
 */
if (import.meta.url.endsWith(".ts") && process.env.SANDBOX_PRECOMPILE !== "0") {
  try {
    const { precompile } = await import("./boot/precompile.ts");
    // stripTypeScriptTypes announces itself as experimental; that line is noise in server logs.
    const emitWarning = process.emitWarning;
    process.emitWarning = () => {};
    const compiled = precompile();
    process.emitWarning = emitWarning;
    process.execve!(process.execPath, [process.execPath, ...process.execArgv, compiled, ...process.argv.slice(2)], process.env);
  } catch (error) {
    console.error(`running from TypeScript sources (precompile failed: ${(error as Error).message})`);
  }
}

const { startServer } = await import("./server.ts");

const server = await startServer({
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
