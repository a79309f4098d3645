/**
 * The per-server state behind the file, session, env and info routes: the isolation in effect, the
 * path policy of the file routes, the session store and the file limits. `startServer` creates them
 * once, with their spawn hooks installed on the process table, and puts them on the server's context;
 * creating them is where a server asking for an unavailable isolation fails to start.
 */
import type { ProcessTable } from "../engine/process-table.ts";
import { PathPolicy } from "../files/paths.ts";
import type { IsolationInEffect } from "../../protocol/isolation.ts";
import { resolveIsolationOptions } from "../../server-kit/isolation-config.ts";
import { CommandIsolation, containerWallsFromEnv } from "../isolation/index.ts";
import { sessionSpawnHook } from "../sessions/hook.ts";
import { SessionStore } from "../sessions/store.ts";
import { fileLimitsOf, isolationFieldsOf, serviceOptionsFromEnv, type ResolvedFileLimits, type ServiceOptions } from "./options.ts";

export interface ServerServices {
  readonly isolation: CommandIsolation;
  readonly paths: PathPolicy;
  readonly sessions: SessionStore;
  readonly fileLimits: ResolvedFileLimits;
  /** Removes the spawn hooks, forgets the sessions, removes the state directory it created. */
  close(): void;
}

export interface ServicesSetup {
  workspace: string;
  /** HOME of commands (under bwrap it gets a private directory). */
  home: string | undefined;
  processes: ProcessTable;
}

export function createServerServices(setup: ServicesSetup, given: ServiceOptions): ServerServices {
  const options = withEnvironmentDefaults(given);
  const isolationOptions = resolveIsolationOptions(isolationFieldsOf(options), {});
  const isolation = new CommandIsolation(isolationOptions, {
    workspace: setup.workspace,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(setup.home ? { home: setup.home } : {}),
    ...withWalls(containerWallsFromEnv(process.env)),
  });
  const paths = new PathPolicy({
    workspace: setup.workspace,
    // Commands wrapped one by one in bwrap see less than the server does: the file routes keep to
    // what they see at the same path. Otherwise the server is the sandbox (its container, or none).
    reach: isolationOptions.isolation === "bwrap" ? "roots" : "anywhere",
    readWritePaths: isolationOptions.readWritePaths,
    readOnlyPaths: isolationOptions.readOnlyPaths,
  });
  const sessions = new SessionStore(setup.workspace);
  const { hooks } = setup.processes;
  const removeHooks = [hooks.add(sessionSpawnHook(sessions, { runsDir: isolation.runsDir, hostPathOf: (p) => isolation.hostPathOf(p) }))];
  const isolationHook = isolation.spawnHook();
  if (isolationHook) removeHooks.push(hooks.add(isolationHook));

  return {
    isolation,
    paths,
    sessions,
    fileLimits: fileLimitsOf(options),
    close() {
      for (const remove of removeHooks) remove();
      sessions.clear();
      isolation.close();
    },
  };
}

/**
 * Options given to startServer win; what they leave out comes from the environment the server was
 * started with (SANDBOX_ISOLATION, …), so a server asked for bwrap by its environment never runs
 * unconfined, whichever entry point started it.
 */
function withEnvironmentDefaults(options: ServiceOptions): ServiceOptions {
  const merged: ServiceOptions = { ...serviceOptionsFromEnv(process.env) };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}

function withWalls(walls: IsolationInEffect | undefined): { walls?: IsolationInEffect } {
  return walls ? { walls } : {};
}
