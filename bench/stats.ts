export interface BenchResult {
  name: string;
  unit: string;
  p50: number;
  p95: number;
  samples: number;
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** A row of milliseconds: the p50 and p95 of `values`. */
export function msRow(name: string, values: readonly number[]): BenchResult {
  return {
    name,
    unit: 'ms',
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    samples: values.length,
  };
}

export function formatTable(results: readonly BenchResult[]): string {
  const rows = results.map((r) => [
    r.name,
    `${r.p50.toFixed(1)} ${r.unit}`,
    `${r.p95.toFixed(1)} ${r.unit}`,
    String(r.samples),
  ]);
  const header = ['benchmark', 'p50', 'p95', 'samples'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
