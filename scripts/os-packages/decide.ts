/**
 * What to do about missing OS packages, decided from plain facts so it can be tested without apt:
 * install them (root with apt-get), print the command that would (anyone else), fail (CI, where a test
 * is never skipped for a missing package), or only say which parts need Linux (any other system).
 */
import type { Need, OsPackage } from "./packages.ts";

export interface Circumstances {
  platform: NodeJS.Platform;
  /** Running as root (uid 0). */
  root: boolean;
  /** apt-get is on PATH. */
  aptGet: boolean;
  /** CI=true: nothing may be skipped. */
  ci: boolean;
}

export type Decision =
  | { action: "nothing" }
  | { action: "not-linux"; message: string }
  | { action: "install"; packages: string[]; message: string }
  | { action: "stop"; message: string };

/** The apt-get arguments that install `packages` (one line, for a user or for us). */
export function installArgs(packages: readonly string[]): string[] {
  return ["install", "-y", "--no-install-recommends", ...packages];
}

/** The command a user runs to install `packages` themselves. */
export function installCommand(packages: readonly string[]): string {
  return `sudo apt-get ${installArgs(packages).join(" ")}`;
}

/** "npm start", "npm test", "npm test, npm run test:image": who is asking. */
export function describeNeeds(needs: readonly Need[]): string {
  return needs.map((need) => (need === "image" ? "npm run test:image" : `npm ${need}`)).join(", ");
}

function listed(packages: readonly OsPackage[]): string {
  return packages.map((pkg) => `${pkg.name} (${pkg.why})`).join("; ");
}

export function decide(needs: readonly Need[], missing: readonly OsPackage[], facts: Circumstances): Decision {
  if (missing.length === 0) return { action: "nothing" };
  const who = describeNeeds(needs);
  const names = missing.map((pkg) => pkg.name);
  if (facts.platform !== "linux") {
    return {
      action: "not-linux",
      message: `${who}: not Linux, so these parts need a Linux machine and will fail or be skipped here: ${listed(missing)}`,
    };
  }
  if (facts.root && facts.aptGet) {
    return { action: "install", packages: names, message: `${who}: installing missing OS packages: apt-get ${installArgs(names).join(" ")}` };
  }
  const why = !facts.aptGet ? "no apt-get here" : "not root";
  if (facts.ci) {
    return {
      action: "stop",
      message: `${who}: CI: missing OS packages ${listed(missing)}, and they cannot be installed (${why}): install them with ${installCommand(names)}`,
    };
  }
  return { action: "stop", message: `${who}: missing OS packages ${listed(missing)}: run ${installCommand(names)}` };
}
