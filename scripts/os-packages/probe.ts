/**
 * Whether a declared OS package is installed, by its probe: its commands found as executables on a
 * PATH, its module imported by the system Python, or a name the system's resolver answers with
 * loopback (asked through `getent ahosts`, which asks getaddrinfo as every client does). The PATH
 * and the Python are parameters, so a test can point them at a folder of its own.
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

/** Whether getaddrinfo answers `name` with loopback addresses only (false when it does not answer). */
export function resolvesToLoopback(name: string, path: string): boolean {
  const result = spawnSync("getent", ["ahosts", name], { encoding: "utf8", env: { PATH: path }, timeout: 30_000 });
  if (result.status !== 0) return false;
  const addresses = result.stdout.split("\n").filter((line) => line.trim() !== "").map((line) => line.split(/\s+/)[0]!);
  return addresses.length > 0 && addresses.every((address) => address.startsWith("127.") || address === "::1");
}

export function isInstalled(pkg: OsPackage, environment: ProbeEnvironment): boolean {
  if ("commands" in pkg.probe) return pkg.probe.commands.every((command) => onPath(command, environment.path));
  if ("resolvesToLoopback" in pkg.probe) return resolvesToLoopback(pkg.probe.resolvesToLoopback, environment.path);
  return pythonImports(pkg.probe.pythonImport, environment.python);
}

/** The packages of `packages` that are not installed. */
export function missingPackages(packages: readonly OsPackage[], environment: ProbeEnvironment): OsPackage[] {
  return packages.filter((pkg) => !isInstalled(pkg, environment));
}
