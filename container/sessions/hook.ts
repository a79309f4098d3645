/**
 * The session spawn hook. A command in a session (every command but an isolated one: the default
 * session is the session of a call that names none) starts in the session's cwd (unless the call
 * names one) with env = base ← sandbox ← session ← call, and the session's time limit when the call
 * gives none. A shell command is wrapped so that it starts with the session's functions, aliases and
 * options, and, after it exits normally, the state it left behind flows back into the session (see
 * capture.ts). A direct exec (`args`) gets cwd, env and time limit but no capture. Deleted sessions
 * are never revived by a command that finishes after the delete.
 */
import { randomBytes } from "node:crypto";
import { rmSync, statSync } from "node:fs";
import path from "node:path";
import type { ProcessInfo } from "../../protocol/process.ts";
import { HOOK_ORDER, type PreparedSpawn, type SpawnHook, type SpawnPlan, type SpawnRequest } from "../engine/hooks.ts";
import { withCallEnv } from "../engine/environment.ts";
import { capturePrelude, diffState, readCapturedState, SHELL_STATE_VAR, shellStateValue, type StartState } from "./capture.ts";
import { bashDefaultOptions, effectiveOptions } from "./shell-state.ts";
import type { Session, SessionStore } from "./store.ts";

export interface SessionHookOptions {
  /** Per-run state files: the host directory, and the same directory as commands see it. */
  runsDir: { host: string; visible: string };
  /** Maps a path as commands see it to the host (they differ under isolation). */
  hostPathOf?: (sandboxPath: string) => string;
}

export function sessionSpawnHook(store: SessionStore, options: SessionHookOptions): SpawnHook {
  const hostPathOf = options.hostPathOf ?? ((p: string) => p);
  return {
    name: "session",
    order: HOOK_ORDER.session,
    prepare(plan: SpawnPlan, request: SpawnRequest): PreparedSpawn {
      if (request.sessionId === undefined) return plan;
      const session = store.getOrCreate(request.sessionId);
      // A session whose directory was removed since starts again from the default.
      const cwd = request.cwd !== undefined ? plan.cwd : isDirectory(hostPathOf(session.cwd)) ? session.cwd : store.defaultCwd;
      const env = sessionEnv(plan.env, session, request.env);
      const timeoutMs = request.timeoutMs ?? session.commandTimeoutMs;
      const limit = timeoutMs === undefined ? {} : { timeoutMs };
      if (request.args !== undefined || !isBashPlan(plan)) return { ...plan, cwd, env, ...limit };
      // The server asks once it is quiet after starting (server.ts); a shell command before that
      // asks now, and its capture waits for the answer only if bash answers after the command ends.
      void bashDefaultOptions();

      const runFile = `${request.processId.replace(/[^A-Za-z0-9._-]/g, "_")}-${randomBytes(6).toString("hex")}`;
      const hostFile = path.join(options.runsDir.host, runFile);
      // bash keeps a logical $PWD when PWD names its start directory: a cwd through a symlink stays as given.
      env.PWD = cwd;
      const { functions, aliases, restore } = session;
      const sessionOptions = new Map(session.options);
      const startEnv = { ...env };
      if (restore !== "") env[SHELL_STATE_VAR] = shellStateValue(restore);
      return {
        ...plan,
        cwd,
        env,
        ...limit,
        args: ["-c", capturePrelude(path.join(options.runsDir.visible, runFile), restore !== "") + request.command],
        onExit: async (info: ProcessInfo) => {
          try {
            if (!endedNormally(info)) return;
            const after = readCapturedState(hostFile);
            if (!after) return;
            const defaults = await bashDefaultOptions();
            // Without bash's defaults to tell changes from, options are not carried (the rest is).
            const startOptions = defaults.size === 0 ? undefined : effectiveOptions(defaults, sessionOptions);
            const before: StartState = { cwd, env: startEnv, functions, aliases, options: startOptions, defaults };
            store.applyChanges(session, diffState(before, after));
          } finally {
            rmSync(hostFile, { force: true });
          }
        },
      };
    },
  };
}

/** base ← sandbox (already in plan.env) ← session ← call. */
function sessionEnv(planEnv: Readonly<Record<string, string>>, session: Session, callEnv: SpawnRequest["env"]): Record<string, string> {
  const env: Record<string, string> = { ...planEnv };
  for (const name of session.unset) delete env[name];
  for (const [name, value] of session.env) env[name] = value;
  return withCallEnv(env, callEnv);
}

/** Exited by itself (any exit code): not killed, not timed out, not failed to start. */
function endedNormally(info: ProcessInfo): boolean {
  return (info.status === "completed" || info.status === "failed") && !info.killed && !info.timedOut;
}

function isBashPlan(plan: SpawnPlan): boolean {
  return path.basename(plan.file) === "bash" && plan.args.length === 2 && plan.args[0] === "-c";
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
