import { spawnSync } from 'node:child_process';
import { bubblewrapArgs, bubblewrapExecutable, SANDBOX_ENV } from '../../activities/tools/sandbox';
import type { SandboxKind } from '../../contracts/tools';
import { available } from './required';

/** A sandbox this project ships, as tests run bash in it: forced by `sandbox.kind`, skipped where it cannot start. */
export interface ShippedSandbox {
  name: string;
  kind: SandboxKind;
  /** Why it cannot run here (the suite is then skipped with this in its title). */
  missing?: string;
}

/** bubblewrap's own probe, run synchronously so that a suite can be skipped when it is declared. */
function bubblewrapMissing(): string | undefined {
  const bwrap = bubblewrapExecutable();
  if (bwrap === undefined) return 'bwrap is not on PATH';
  const trial = spawnSync(bwrap, [...bubblewrapArgs(), '--', 'bash', '-c', 'exit 0'], {
    env: SANDBOX_ENV,
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (trial.error || trial.status !== 0) return `bwrap cannot start: ${trial.stderr.trim() || trial.error}`;
  return undefined;
}

export const SHIPPED_SANDBOXES: ShippedSandbox[] = [
  { name: 'bubblewrap', kind: 'bubblewrap', missing: bubblewrapMissing() },
  { name: 'just-bash', kind: 'just-bash' },
];

/** Whether `sandbox` runs here (SUBAGENTS_REQUIRE_SANDBOX=1: one that cannot start fails the test file). */
export function sandboxRuns(sandbox: ShippedSandbox): boolean {
  return available('sandbox', `the ${sandbox.name} sandbox`, sandbox.missing);
}

/**
 * `describe` once per shipped sandbox; a sandbox that cannot start here is skipped, saying why (a failure under
 * SUBAGENTS_REQUIRE_SANDBOX=1).
 */
export function describeEachSandbox(title: string, body: (sandbox: ShippedSandbox) => void): void {
  for (const sandbox of SHIPPED_SANDBOXES) {
    if (sandboxRuns(sandbox)) describe(`${title} (${sandbox.name})`, () => body(sandbox));
    else describe.skip(`${title} (${sandbox.name}: skipped, ${sandbox.missing})`, () => body(sandbox));
  }
}
