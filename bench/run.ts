/**
 * `npm run bench`: runs each benchmark module and prints its tables as markdown. Pass names (or
 * parts of names) to run only some: `npm run bench -- exec stream`.
 */
import type { BenchModule, BenchTable } from "./types.ts";

/** Every benchmark, in the order they run. Add a module here to include it. */
const MODULES: (() => Promise<{ default: BenchModule }>)[] = [
  () => import("./container-exec.ts"),
  () => import("./container-stream.ts"),
  () => import("./files-throughput.ts"),
  () => import("./isolation-exec.ts"),
  () => import("./container-memory.ts"),
  () => import("./container-loss.ts"),
  () => import("./chain-exec.ts"),
];

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

const filters = process.argv.slice(2);
const started = Date.now();
let failed = false;
console.log(`# Benchmarks (node ${process.version}, ${new Date().toISOString()})\n`);
for (const load of MODULES) {
  const bench = (await load()).default;
  if (filters.length > 0 && !filters.some((filter) => bench.name.includes(filter))) continue;
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
