/**
 * The program of the image's startup snapshot (boot/snapshot.ts makes it): when the snapshot is made,
 * this loads the server's modules, so their code is compiled, and builds the schemas a first command
 * is validated with (the rest are built on their first use, and so are not in the snapshot); a process
 * started from the snapshot only serves (boot/serve.ts), from where the start script names main.js.
 *
 * A process started from the snapshot other than by the start script, with variables the server does
 * not read, runs main.js instead, which re-executes itself with a scrubbed environment as it always does.
 */
import { startupSnapshot } from "node:v8";
import { buildExecSchemas } from "../http/routes/exec.ts";
import { startServer } from "../server.ts";
import { serve } from "./serve.ts";
import { hasForeignVariables } from "./server-env.ts";

buildExecSchemas();

startupSnapshot.setDeserializeMainFunction(() => {
  if (hasForeignVariables(process.env)) {
    process.execve!(process.execPath, [process.execPath, process.argv[1]!, ...process.argv.slice(2)], process.env as Record<string, string>);
  }
  void serve(startServer);
});
