/**
 * `npm run os-packages -- <start|test|image|bench>…`: checks (and where it can, installs) the OS packages
 * those need; exits 1 when one is missing and cannot be installed. `npm test` runs it first (its
 * `pretest` script: npm runs it for every `npm test`, before vitest starts any project) and `.ci/run`
 * runs it for everything CI runs; `npm run bench` runs it first for the tests' packages and its own (`prebench`). `npm start` and `npm run test:image` call ensure.ts themselves.
 */
import { ensureOsPackages } from "./ensure.ts";
import type { Need } from "./packages.ts";

const NEEDS: readonly Need[] = ["start", "test", "image", "bench"];
const needs = process.argv.slice(2);
const unknown = needs.filter((need) => !NEEDS.includes(need as Need));
if (needs.length === 0 || unknown.length > 0) {
  console.error(`usage: os-packages ${NEEDS.join("|")}…${unknown.length > 0 ? ` (not one: ${unknown.join(", ")})` : ""}`);
  process.exit(2);
}
process.exit(ensureOsPackages(needs as Need[]) ? 0 : 1);
