/**
 * Whether a declared OS package is installed, by its probe: its commands found as executables on a
 * PATH, or its module imported by the system Python. The PATH and the Python are parameters, so a
 * test can point them at a folder of its own.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { spawnSync } from "node:child_process";
import { SYSTEM_PYTHON, type OsPackage } from "./packages.ts";

export interface ProbeEnvironment {
  /** The search path for commands (default: this process's PATH). */
  path: string;
  /** The Python whose imports count (default /usr/bin/python3). */
  python: string;
}

export function probeEnvironment(env: NodeJS.ProcessEnv = process.env): ProbeEnvironment {
  return { path: env.PATH ?? "", python: SYSTEM_PYTHON };
}

/** Whether `command` is an executable file in one of the PATH's folders. */
export function onPath(command: string, path: string): boolean {
  return path
    .split(delimiter)
    .filter((dir) => dir !== "")
    .some((dir) => {
      const file = join(dir, command);
      try {
        accessSync(file, constants.X_OK);
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
}

/** Whether `python` can import `module` (false when there is no such Python). */
export function pythonImports(module: string, python: string): boolean {
  const result = spawnSync(python, ["-c", `import ${module}`], { stdio: "ignore", timeout: 30_000 });
  return result.status === 0;
}

export function isInstalled(pkg: OsPackage, environment: ProbeEnvironment): boolean {
  if ("commands" in pkg.probe) return pkg.probe.commands.every((command) => onPath(command, environment.path));
  return pythonImports(pkg.probe.pythonImport, environment.python);
}

/** The packages of `packages` that are not installed. */
export function missingPackages(packages: readonly OsPackage[], environment: ProbeEnvironment): OsPackage[] {
  return packages.filter((pkg) => !isInstalled(pkg, environment));
}
