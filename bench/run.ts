/**
 * `npm run bench`: runs each benchmark module and prints its tables as markdown. Pass names (or
 * parts of names) to run only some: `npm run bench -- exec stream`.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { BenchModule, BenchTable } from "./types.ts";

/** Every benchmark module (a file in bench/ whose default export is a BenchModule), in the order they run. */
const MODULES = [
  "container-exec.ts",
  "container-stream.ts",
  "files-throughput.ts",
  "isolation-exec.ts",
  "container-memory.ts",
  "container-loss.ts",
  "chain-exec.ts",
  "terminal-echo.ts",
  "bridge-first-command.ts",
  "leaderboard-tti.ts",
  "first-command.ts",
  "code-interpreter.ts",
  "code-first-run.ts",
  "code-cells.ts",
  "preview-ports.ts",
  "snapshot-throughput.ts",
  "openai-agents-exec.ts",
  "python-client.ts",
  "image-startup.ts",
  "server-instructions.ts",
  "lifecycle.ts",
  "egress-proxy.ts",
  "egress-worker.ts",
  "egress-destination.ts",
  "docker-engine.ts",
];

/** A benchmark left out of MODULES would silently never run: refuse to start instead. */
function checkEveryModuleIsListed(): void {
  const dir = new URL(".", import.meta.url);
  const unlisted = readdirSync(dir).filter(
    (file) => file.endsWith(".ts") && !MODULES.includes(file) && /^export default /m.test(readFileSync(new URL(file, dir), "utf8")),
  );
  if (unlisted.length > 0) throw new Error(`bench/run.ts: add ${unlisted.join(", ")} to MODULES`);
}

function render(table: BenchTable): string {
  const lines = [
    `### ${table.title}`,
    "",
    `| metric | ours | baseline (${table.baselineLabel}) | aim | met |`,
    "| --- | ---: | ---: | --- | :---: |",
    ...table.rows.map(
      (row) => `| ${row.metric} | ${row.ours} | ${row.baseline} | ${row.target ?? ""} | ${row.met === undefined ? "" : row.met ? "yes" : "**no**"} |`,
    ),
  ];
  for (const note of table.notes ?? []) lines.push("", `_${note}_`);
  return lines.join("\n");
}

checkEveryModuleIsListed();
const filters = process.argv.slice(2);
const names = await Promise.all(MODULES.map(async (file) => ((await import(`./${file}`)) as { default: BenchModule }).default.name));
/** A filter that is a benchmark's whole name runs that one alone (`first-command`, not `bridge-first-command` too); else every name containing it. */
const selects = (filter: string, name: string) => (names.includes(filter) ? name === filter : name.includes(filter));
const started = Date.now();
let failed = false;
console.log(`# Benchmarks (node ${process.version}, ${new Date().toISOString()})\n`);
for (const file of MODULES) {
  const bench = ((await import(`./${file}`)) as { default: BenchModule }).default;
  if (filters.length > 0 && !filters.some((filter) => selects(filter, bench.name))) continue;
  const t0 = Date.now();
  try {
    for (const table of await bench.run()) console.log(render(table) + "\n");
    console.log(`<sub>${bench.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s</sub>\n`);
  } catch (error) {
    failed = true;
    console.log(`### ${bench.name}\n\nfailed: ${(error as Error).stack ?? error}\n`);
  }
}
console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = failed ? 1 : 0;
