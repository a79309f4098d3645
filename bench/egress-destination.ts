/**
 * What finding a proxied connection's destination costs, beside the old way, with a sandbox holding
 * many connections: the proxy's listener is transparent now (TPROXY), so the accepted socket's own
 * local address is the destination; before, the namespace's whole conntrack table was read as text
 * for every accepted connection, a cost that grows with every connection held (and, with thousands
 * held and accepted at once, the text of thousands of tables in the heap together). Each figure is
 * measured in a network namespace of its own (egress-destination-probe.ts), as root.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, percentile } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const PROBE = fileURLToPath(new URL("./egress-destination-probe.ts", import.meta.url));
const HELD = [10, 1000, 4000];
const LOOKUPS = 200;

interface Probe {
  held: number;
  found: number;
  timings: { conntrack: number[]; localAddress: number[] };
}

const us = (value: number) => (value >= 1000 ? `${(value / 1000).toFixed(2)} ms` : `${value.toFixed(1)} µs`);

async function run(): Promise<BenchTable[]> {
  if (process.getuid?.() !== 0) return [{ title: "Egress: a connection's destination", baselineLabel: "conntrack table read", rows: [], notes: ["needs root (a network namespace of its own)"] }];
  const rows = [];
  for (const held of HELD) {
    const result = spawnSync("unshare", ["-n", "--", process.execPath, PROBE, String(held), String(LOOKUPS)], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`the probe failed: ${result.stderr}`);
    const probe = JSON.parse(result.stdout) as Probe;
    if (probe.found !== 2 * LOOKUPS) throw new Error(`the probe found ${probe.found} of ${2 * LOOKUPS} destinations`);
    const ours = probe.timings.localAddress;
    const old = probe.timings.conntrack;
    rows.push({
      metric: `destination of one connection, ${held} held (median / p95)`,
      ours: `${us(median(ours))} / ${us(percentile(ours, 95))}`,
      baseline: `${us(median(old))} / ${us(percentile(old, 95))}`,
      target: "flat in the connections held",
      met: median(ours) < 50,
    });
  }
  return [
    {
      title: "Egress: a connection's destination",
      baselineLabel: "the old way: the namespace's conntrack table read as text",
      rows,
      notes: ["ours: the accepted socket's local address (TPROXY hands the connection over untranslated): one getsockname per socket"],
    },
  ];
}

export default { name: "egress-destination", run } satisfies BenchModule;
