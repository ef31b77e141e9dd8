/**
 * `npm run bench`: starts a dev server (or uses TEMPORAL_ADDRESS), runs every benchmark, prints a table and
 * writes the figures to bench/results.json (copied by hand into BENCHMARKS.md with the machine they ran on).
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { formatTable, type BenchResult } from './stats';
import { benchAdmission } from './admission';
import { withBenchServer } from './support/bench-server';
import { benchBashSandboxes } from './bash-sandbox';
import { benchDelegationOverhead } from './delegation-overhead';
import { benchEmbeddedMemory } from './embedded-memory';
import { benchEncryption } from './encryption';
import { benchHandBack } from './handback';
import { benchLongRun } from './long-run';
import { benchProviderHandout } from './provider-handout';
import { benchRecovery } from './recovery';
import { benchGuardrails } from './guardrails';
import { benchToolSearch } from './tool-search';
import { benchTurnOverhead } from './turn-overhead';
import { benchWorkerStart } from './worker-start';

async function main(): Promise<void> {
  await withBenchServer(async (server) => {
    const results: BenchResult[] = [];
    results.push(...(await benchTurnOverhead(server)));
    results.push(...(await benchDelegationOverhead(server)));
    results.push(...(await benchAdmission(server)));
    results.push(...(await benchProviderHandout(server)));
    results.push(...(await benchLongRun(server)));
    results.push(...(await benchRecovery(server)));
    results.push(...(await benchWorkerStart(server)));
    results.push(...(await benchBashSandboxes()));
    results.push(...(await benchToolSearch(server)));
    results.push(...(await benchEncryption()));
    results.push(...(await benchHandBack(server)));
    results.push(...(await benchEmbeddedMemory()));
    results.push(...(await benchGuardrails()));
    process.stdout.write(`${formatTable(results)}\n`);
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
    const out = join(__dirname, '..', '..', 'bench', 'results.json');
    writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2)}\n`);
    process.stderr.write(`figures written to ${out}\n`);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
