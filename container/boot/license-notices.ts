/**
 * The license notices a bundle carries: a bundle copies its packages' code into its own files, which
 * drops the license files they were installed with, and their licenses ask that a copy keep them.
 * Written beside the bundle's entry from the packages the bundler reports it took code from.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The bundled packages' names, versions and license texts (a copy of their code must carry them). */
export function licenseNotices(modules: string, inputs: readonly string[]): string {
  const packages = new Set<string>();
  for (const input of inputs) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) packages.add(match[1]!);
  }
  return [...packages]
    .sort()
    .map((name) => {
      const dir = join(modules, name);
      const { version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string; license?: string };
      const file = readdirSync(dir).find((entry) => /^licen[cs]e/i.test(entry));
      const text = file ? readFileSync(join(dir, file), "utf8").trim() : `License: ${license ?? "see the package"}`;
      return `${name}@${version}\n\n${text}\n`;
    })
    .join(`\n${"-".repeat(72)}\n\n`);
}
