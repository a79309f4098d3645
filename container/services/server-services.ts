/**
 * The per-server state behind the sandbox routes (files, sessions, env, info): the isolation in
 * effect, the path policy of the file routes, and the session store, created together on first use
 * by whichever route group sets up first, with their spawn hooks installed on the process table.
 * Creating them is where a server asking for an unavailable isolation fails to start.
 */
import type { ServerContext } from "../http/types.ts";
import { resolveIsolationOptions } from "../isolation/config.ts";
import { CommandIsolation } from "../isolation/index.ts";
import { PathPolicy } from "../files/paths.ts";
import { sessionSpawnHook } from "../sessions/hook.ts";
import { SessionStore } from "../sessions/store.ts";
import { getBaseEnv } from "../engine/environment.ts";
import { fileLimitsOf, isolationFieldsOf, sandboxOptionsFromEnv, type ResolvedFileLimits, type SandboxOptions } from "./options.ts";

export interface SandboxServices {
  readonly isolation: CommandIsolation;
  readonly paths: PathPolicy;
  readonly sessions: SessionStore;
  readonly fileLimits: ResolvedFileLimits;
  close(): Promise<void>;
}

const byServer = new WeakMap<ServerContext, SandboxServices>();

export function sandboxServices(server: ServerContext): SandboxServices {
  let services = byServer.get(server);
  if (!services) {
    services = createServices(server, withEnvironmentDefaults(server.sandbox ?? {}));
    byServer.set(server, services);
  }
  return services;
}

/**
 * The `setup` of every route group that uses the services: the first call creates them, and the
 * server's close closes them (closing is idempotent, so each group may return it).
 */
export function setupSandboxServices(server: ServerContext): () => Promise<void> {
  const services = sandboxServices(server);
  return () => services.close();
}

/**
 * Options given to startServer win; what they leave out comes from the environment the server was
 * started with (SANDBOX_ISOLATION, …), so a server asked for bwrap by its environment never runs
 * unconfined, whichever entry point started it.
 */
function withEnvironmentDefaults(options: SandboxOptions): SandboxOptions {
  const merged: SandboxOptions = { ...sandboxOptionsFromEnv(process.env) };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}

function createServices(server: ServerContext, options: SandboxOptions): SandboxServices {
  const isolationOptions = resolveIsolationOptions(isolationFieldsOf(options), {});
  const isolation = new CommandIsolation(isolationOptions, {
    workspace: server.workspace,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(getBaseEnv().HOME ? { home: getBaseEnv().HOME } : {}),
  });
  const paths = new PathPolicy({
    workspace: server.workspace,
    readWritePaths: isolationOptions.readWritePaths,
    readOnlyPaths: isolationOptions.readOnlyPaths,
  });
  const sessions = new SessionStore(server.workspace);
  const removeHooks = [
    server.processes.hooks.add(sessionSpawnHook(sessions, { runsDir: isolation.runsDir, hostPathOf: (p) => isolation.hostPathOf(p) })),
  ];
  const isolationHook = isolation.spawnHook();
  if (isolationHook) removeHooks.push(server.processes.hooks.add(isolationHook));

  let closed = false;
  return {
    isolation,
    paths,
    sessions,
    fileLimits: fileLimitsOf(options),
    async close() {
      if (closed) return;
      closed = true;
      for (const remove of removeHooks) remove();
      sessions.clear();
      isolation.close();
    },
  };
}
