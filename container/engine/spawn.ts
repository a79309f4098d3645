/**
 * From a CommandSpec to a running child: the initial plan (shell or direct exec, env, cwd), checks
 * that turn "cannot start" into a clear message, and the spawn itself, which resolves only once the
 * child has really started (or failed to).
 *
 * Every child is spawned `detached`: it leads its own process group, so a kill or a timeout can
 * signal the whole tree at once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import { findExecutable, isExecutableFile } from "../../server-kit/executables.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { DEFAULT_PATH, type CommandEnvironment } from "./environment.ts";
import type { SpawnPlan } from "./hooks.ts";
import type { CommandSpec } from "./options.ts";

/** bash when there is one, else sh; looked up once. */
export const SHELL = findShell();

function findShell(): string {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/bin", "/usr/bin"];
  return findExecutable("bash", dirs) ?? findExecutable("sh", dirs) ?? "/bin/sh";
}

/** Relative cwd → against the workspace. */
export function resolveCwd(cwd: string | undefined, workspace: string): string {
  if (cwd === undefined) return workspace;
  return isAbsolute(cwd) ? cwd : resolve(workspace, cwd);
}

/** The plan before hooks: `bash -c command`, or the program resolved in PATH with its args. */
export function initialPlan(spec: Pick<CommandSpec, "command" | "args" | "cwd" | "env">, workspace: string, environment: CommandEnvironment): SpawnPlan {
  const env = environment.forCommand(spec.env);
  const cwd = resolveCwd(spec.cwd, workspace);
  if (spec.args === undefined) return { file: SHELL, args: ["-c", spec.command], env, cwd };
  return { file: resolveProgram(spec.command, env.PATH ?? DEFAULT_PATH, cwd), args: [...spec.args], env, cwd };
}

function resolveProgram(program: string, path: string, cwd: string): string {
  if (program.includes("/")) {
    const file = resolve(cwd, program);
    if (!isExecutableFile(file)) {
      throw new ServiceError("SPAWN_FAILED", `cannot execute ${program}: not an executable file`, { command: program });
    }
    return file;
  }
  const found = findExecutable(program, path.split(delimiter));
  if (!found) throw new ServiceError("SPAWN_FAILED", `command not found: ${program}`, { command: program });
  return found;
}

/** Synchronous on purpose: one stat is cheaper than a trip through the thread pool. */
export function checkCwd(cwd: string): void {
  let info;
  try {
    info = statSync(cwd);
  } catch {
    info = undefined;
  }
  if (!info) throw new ServiceError("SPAWN_FAILED", `working directory does not exist: ${cwd}`, { cwd });
  if (!info.isDirectory()) throw new ServiceError("SPAWN_FAILED", `working directory is not a directory: ${cwd}`, { cwd });
}

/**
 * Spawns and waits for 'spawn' or 'error', so the caller hears about a failed start right away.
 * `extraPipes` adds that many more pipes after stderr (fd 3 on), for a program driven over its own channel.
 */
export function spawnChild(plan: SpawnPlan, argv0: string, stdin: "pipe" | "ignore", extraPipes = 0): Promise<ChildProcess> {
  return new Promise((resolvePromise, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(plan.file, plan.args, {
        cwd: plan.cwd,
        env: plan.env,
        argv0,
        detached: true,
        stdio: [stdin, "pipe", "pipe", ...new Array<"pipe">(extraPipes).fill("pipe")],
        windowsHide: true,
      });
    } catch (error) {
      reject(spawnError(error, plan));
      return;
    }
    const onSpawn = () => {
      child.off("error", onError);
      resolvePromise(child);
    };
    const onError = (error: Error) => {
      child.off("spawn", onSpawn);
      reject(spawnError(error, plan));
    };
    child.once("spawn", onSpawn);
    child.once("error", onError);
  });
}

function spawnError(error: unknown, plan: SpawnPlan): ServiceError {
  const code = (error as NodeJS.ErrnoException).code;
  const message =
    code === "ENOENT" ? `command not found: ${plan.file}` :
    code === "EACCES" ? `permission denied: ${plan.file}` :
    `cannot start ${plan.file}: ${(error as Error).message}`;
  return new ServiceError("SPAWN_FAILED", message, { file: plan.file, ...(code ? { errno: code } : {}) });
}
