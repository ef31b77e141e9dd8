import type { SandboxProbe } from '../../../../activities/tools/sandbox';
import { machineProbes } from '../../../../activities/tools/machine-probes';
import { chooseSandbox } from '../../../../activities/tools/sandbox-choice';
import { parseConfig } from '../../../../contracts/config';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../../../contracts/tools';
import { SHIPPED_SANDBOXES } from '../../../support/sandboxes';
import { sandboxProblems } from '../../../support/config-problems';

const UP: SandboxProbe = { available: true };
const NO_BWRAP: SandboxProbe = { available: false, reason: 'bwrap was not found on PATH' };
const NO_JUST_BASH: SandboxProbe = { available: false, reason: 'a trial command failed: no node' };

function choose(settings: Partial<SandboxSettings>, bubblewrap: SandboxProbe, justBash: SandboxProbe) {
  return chooseSandbox(
    { ...DEFAULT_SANDBOX, ...settings },
    { bubblewrap: async () => bubblewrap, justBash: async () => justBash },
  );
}

describe('the sandbox bash runs in', () => {
  it('is bubblewrap first, then just-bash, then the host only when allowed (kind auto)', async () => {
    expect(await choose({}, UP, UP)).toEqual({ kind: 'bubblewrap', description: 'bubblewrap' });
    expect(await choose({ allow_host_bash: true }, NO_BWRAP, UP)).toEqual({
      kind: 'just-bash',
      description: 'just-bash (bubblewrap unavailable: bwrap was not found on PATH)',
      reason: 'bubblewrap unavailable: bwrap was not found on PATH',
      fix: 'install bubblewrap (Debian/Ubuntu package "bubblewrap") on the worker machine',
    });
    expect(await choose({ allow_host_bash: true }, NO_BWRAP, NO_JUST_BASH)).toMatchObject({
      kind: 'host',
      description:
        'host bash, unsandboxed (bubblewrap unavailable: bwrap was not found on PATH; ' +
        'just-bash unavailable: a trial command failed: no node)',
    });
    expect(await choose({}, NO_BWRAP, NO_JUST_BASH)).toMatchObject({
      kind: 'none',
      fix:
        'install bubblewrap (Debian/Ubuntu package "bubblewrap") on the worker machine, or allow ' +
        'unsandboxed commands on the host with `sandbox: {allow_host_bash: true}` in the config',
    });
  });

  it('is the one sandbox.kind names, or none (with the reason) when that one cannot start', async () => {
    expect(await choose({ kind: 'just-bash' }, UP, UP)).toMatchObject({ kind: 'just-bash' });
    expect(await choose({ kind: 'host', allow_host_bash: true }, UP, UP)).toMatchObject({ kind: 'host' });
    expect(await choose({ kind: 'bubblewrap', allow_host_bash: true }, NO_BWRAP, UP)).toMatchObject({
      kind: 'none',
      description:
        'none (sandbox.kind is bubblewrap, and bubblewrap cannot start: bwrap was not found on PATH)',
    });
    expect(await choose({ kind: 'just-bash', allow_host_bash: true }, UP, NO_JUST_BASH)).toMatchObject({
      kind: 'none',
      reason: 'sandbox.kind is just-bash, and just-bash cannot start: a trial command failed: no node',
    });
    expect(await choose({ kind: 'host' }, UP, UP)).toMatchObject({ kind: 'none' });
  });

  it('on this machine, is what its probes find', async () => {
    const bubblewrap = SHIPPED_SANDBOXES.find((s) => s.kind === 'bubblewrap');
    const inUse = await chooseSandbox(DEFAULT_SANDBOX, machineProbes());
    expect(inUse.kind).toBe(bubblewrap?.missing === undefined ? 'bubblewrap' : 'just-bash');
  });
});

describe('sandbox.kind in the config', () => {
  it('is absent unless written, and kept when written', () => {
    expect(parseConfig({}).config.sandbox).not.toHaveProperty('kind');
    expect(parseConfig({ sandbox: { kind: 'just-bash' } }).config.sandbox.kind).toBe('just-bash');
  });

  it('is one of the sandboxes, and host only with allow_host_bash', () => {
    expect(sandboxProblems({ kind: 'docker' })).toEqual([
      'sandbox.kind: "docker" is not an accepted value (auto, bubblewrap, just-bash, host)',
    ]);
    expect(sandboxProblems({ kind: 'host' })).toEqual([
      'sandbox.kind: "host" needs allow_host_bash: true (commands would run unsandboxed on the worker machine)',
    ]);
    expect(sandboxProblems({ kind: 'host', allow_host_bash: true })).toEqual([]);
  });
});
