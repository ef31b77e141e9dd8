/**
 * The cost of one `bash` call in each sandbox (the tool function itself, no Temporal), and what just-bash's
 * own process spends before the command: Node's start and the module's load. Runs alone too:
 * `node dist/bench/bash-sandbox.js`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBash } from '../activities/tools/bash';
import { machineProbes, type MachineProbes } from '../activities/tools/machine-probes';
import { DEFAULT_SANDBOX, type SandboxKind } from '../contracts/tools';
import { tempDir } from '../test/support/subagent-input';
import { formatTable, percentile, type BenchResult } from './stats';

const CALLS = 20;
const LOADS = 10;
const COMMAND = 'grep -c north notes/incidents.md';

function result(name: string, samples: number[]): BenchResult {
  return {
    name,
    unit: 'ms',
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    samples: samples.length,
  };
}

async function bashCalls(kind: SandboxKind, workspace: string, probes: MachineProbes): Promise<number[]> {
  const ctx = {
    workspace,
    workspaceReal: workspace,
    sandbox: { ...DEFAULT_SANDBOX, kind, allow_host_bash: kind === 'host' },
    heartbeat: () => undefined,
  };
  const first = await runBash({ command: COMMAND }, ctx, probes);
  if (first.content !== '2\n[exit code: 0]') throw new Error(`bash in ${kind}: ${first.content}`);
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await runBash({ command: COMMAND }, ctx, probes);
    samples.push(performance.now() - started);
  }
  return samples;
}

/** Wall time of fresh Node processes: doing nothing, and loading just-bash (as the runner does). */
function processStarts(script: string): number[] {
  const samples: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const started = performance.now();
    execFileSync(process.execPath, ['-e', script], { cwd: __dirname });
    samples.push(performance.now() - started);
  }
  return samples;
}

/** just-bash's module load inside a fresh process, as that process measures it. */
function moduleLoads(): number[] {
  const script =
    "const t = performance.now(); require('just-bash'); process.stdout.write(String(performance.now() - t));";
  return Array.from({ length: LOADS }, () =>
    Number(execFileSync(process.execPath, ['-e', script], { cwd: __dirname, encoding: 'utf8' })),
  );
}

export async function benchBashSandboxes(): Promise<BenchResult[]> {
  const workspace = join(tempDir('bench-bash'), 'workspace');
  mkdirSync(join(workspace, 'notes'), { recursive: true });
  writeFileSync(join(workspace, 'notes', 'incidents.md'), '- north: a\n- south: b\n- north: c\n');
  const results: BenchResult[] = [];
  const probes = machineProbes();
  if ((await probes.bubblewrap()).available) {
    results.push(result('bash call, bubblewrap', await bashCalls('bubblewrap', workspace, probes)));
  }
  results.push(
    result('bash call, just-bash (a Node process per call)', await bashCalls('just-bash', workspace, probes)),
  );
  results.push(result('bash call, host bash', await bashCalls('host', workspace, probes)));
  results.push(result('node -e 0 (a fresh Node process)', processStarts('0')));
  results.push(result('node -e "require(\'just-bash\')"', processStarts("require('just-bash')")));
  results.push(result('just-bash module load, in that process', moduleLoads()));
  return results;
}

if (require.main === module) {
  benchBashSandboxes().then(
    (results) => process.stdout.write(`${formatTable(results)}\n`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
