/**
 * `node dist/bench/support/cpuprofile-summary.js <file.cpuprofile>… [--top 40] [--match text]`: where a
 * profiled process's CPU went (`node --cpu-prof`, e.g. `bench:load --node-options '--cpu-prof
 * --cpu-prof-dir=/tmp/prof'`). Per file (one a thread): busy time (every sample but `(idle)`), then the functions
 * with the most self time and the most inclusive time (a sample counts once for each function on its stack,
 * however often it recurses), each as `name file:line`. `--match` keeps the functions whose name or file contains
 * the text (e.g. `run-lifecycle` or `promise`). V8's profiler samples wall time: a thread waiting inside a native
 * call (a file system call, `vm` with a timeout, a descheduled thread on a loaded machine) counts as busy there,
 * so on a shared machine native functions read high; `perf record` (`--perf-basic-prof`) tells CPU time.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

interface Totals {
  busyMs: number;
  self: Map<string, number>;
  inclusive: Map<string, number>;
}

/** `name file:line`, the file shortened to what follows node_modules/ or dist/. */
function functionKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^file:\/\//, '');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

function summarize(profile: CpuProfile): Totals {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const totals: Totals = { busyMs: 0, self: new Map(), inclusive: new Map() };
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  profile.samples.forEach((id, i) => {
    // A sample lasts until the next one (V8's deltas are the time before each sample).
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    totals.busyMs += ms;
    add(totals.self, functionKey(node), ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = functionKey(byId.get(at) as ProfileNode);
      if (!seen.has(key)) add(totals.inclusive, key, ms);
      seen.add(key);
    }
  });
  return totals;
}

function top(map: Map<string, number>, count: number, match: string | undefined, busyMs: number): string {
  return [...map]
    .filter(([key]) => match === undefined || key.includes(match))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([key, ms]) =>
        `${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / busyMs).toFixed(1).padStart(5)}%  ${key}`,
    )
    .join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '40' }, match: { type: 'string' } },
  });
  const count = Number(values.top);
  for (const file of positionals) {
    const totals = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    process.stdout.write(`== ${basename(file)}: busy ${(totals.busyMs / 1000).toFixed(2)} s\n`);
    process.stdout.write(`-- self\n${top(totals.self, count, values.match, totals.busyMs)}\n`);
    process.stdout.write(`-- inclusive\n${top(totals.inclusive, count, values.match, totals.busyMs)}\n\n`);
  }
}

main();
