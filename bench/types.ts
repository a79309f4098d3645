/** What a benchmark module gives bench/run.ts: one or more tables of our figure beside a baseline. */

export interface BenchRow {
  metric: string;
  /** Our figure, formatted. */
  ours: string;
  /** The baseline measured in the same run, formatted. */
  baseline: string;
  /** The aim, in words (e.g. "≤ baseline + 1 ms"). */
  target?: string;
  /** Whether the aim was met (omitted: no aim). */
  met?: boolean;
}

export interface BenchTable {
  title: string;
  /** What the baseline column is. */
  baselineLabel: string;
  rows: BenchRow[];
  notes?: string[];
}

export interface BenchModule {
  name: string;
  run(): Promise<BenchTable[]>;
}
