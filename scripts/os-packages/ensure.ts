/**
 * The one check of OS packages that `npm start`, `npm test`, `npm run test:image` and `.ci/run` run:
 * probes what the declaration says they need, then does what decide.ts says: nothing, install
 * (root with apt-get), or stop with the command to run. Says what it does in one line.
 */
import { aptInstall, type AptResult } from "./apt.ts";
import { decide, installCommand, type Circumstances } from "./decide.ts";
import { packagesFor, type Need, type OsPackage } from "./packages.ts";
import { missingPackages, onPath, probeEnvironment, type ProbeEnvironment } from "./probe.ts";

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  uid?: number;
  packages?: readonly OsPackage[];
  probe?: ProbeEnvironment;
  install?: (packages: readonly string[]) => AptResult;
  /** Where the one line goes (default: stderr). */
  say?: (line: string) => void;
  /**
   * false: a package that cannot be installed is reported and the caller goes on (`npm start` with
   * SANDBOX_ISOLATION=none). Never in CI, where nothing is skipped.
   */
  required?: boolean;
}

export function isCi(env: NodeJS.ProcessEnv): boolean {
  return env.CI !== undefined && env.CI !== "" && env.CI !== "false" && env.CI !== "0";
}

/** Whether the caller can go on: every package it needs is present now, or it is not on Linux. */
export function ensureOsPackages(needs: readonly Need[], options: EnsureOptions = {}): boolean {
  const env = options.env ?? process.env;
  const say = options.say ?? ((line: string) => console.error(line));
  const probe = options.probe ?? probeEnvironment(env);
  const platform = options.platform ?? process.platform;
  const wanted = packagesFor(needs, options.packages);
  // Elsewhere Debian's packages mean nothing: say which parts need Linux, without probing.
  const missing = platform === "linux" ? missingPackages(wanted, probe) : wanted;
  const facts: Circumstances = {
    platform,
    root: (options.uid ?? process.getuid?.() ?? -1) === 0,
    aptGet: onPath("apt-get", probe.path),
    ci: isCi(env),
  };
  const decision = decide(needs, missing, facts);
  const required = facts.ci || options.required !== false;
  switch (decision.action) {
    case "nothing":
    case "not-linux":
      if (decision.action === "not-linux") say(decision.message);
      return true;
    case "stop":
      say(decision.message);
      return !required;
    case "install": {
      say(decision.message);
      const result = (options.install ?? aptInstall)(decision.packages);
      // A package that is there but not in effect (a resolver module the system is not told to use).
      if (result.ok) for (const pkg of missingPackages(missing, probe)) pkg.settle?.();
      const still = missingPackages(missing, probe);
      if (result.ok && still.length === 0) return true;
      const names = (still.length > 0 ? still : missing).map((pkg) => pkg.name);
      say(`${result.ok ? "" : `${result.output}\n`}apt-get could not install ${names.join(", ")}: run ${installCommand(names)}`);
      return !required;
    }
  }
}
