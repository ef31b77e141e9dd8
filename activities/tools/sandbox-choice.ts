/**
 * Which sandbox `bash` runs in, chosen from the settings and what this machine can start. The bash tool and
 * everything that tells people about it (the worker's start line, a run's header, `doctor`) ask the same
 * function, so what is shown is what runs.
 */
import type { SandboxSettings } from '../../contracts/tools';
import type { SandboxProbe } from './sandbox';

export interface SandboxInUse {
  /** Where bash commands run; `none`: nowhere, and every bash call fails saying why. */
  kind: 'bubblewrap' | 'just-bash' | 'host' | 'none';
  /** One line for people: `bubblewrap`, `just-bash (bubblewrap unavailable: …)`, `none (…)`. */
  description: string;
  /** Why it is not the first choice (bubblewrap), or why there is none. */
  reason?: string;
  /** What would give bash a better sandbox, phrased to follow "To enable it, " or "To get one, ". */
  fix?: string;
}

export interface SandboxProbes {
  bubblewrap: () => Promise<SandboxProbe>;
  justBash: () => Promise<SandboxProbe>;
}

const INSTALL_BUBBLEWRAP = 'install bubblewrap (Debian/Ubuntu package "bubblewrap") on the worker machine';
const ALLOW_HOST =
  'allow unsandboxed commands on the host with `sandbox: {allow_host_bash: true}` in the config';
const HOST = 'host bash, unsandboxed';

function none(reason: string, fix: string): SandboxInUse {
  return { kind: 'none', description: `none (${reason})`, reason, fix };
}

function reasonOf(probe: SandboxProbe): string | undefined {
  return probe.available ? undefined : probe.reason;
}

/** The sandbox for these settings, given the probes of what can start here. */
export async function chooseSandbox(settings: SandboxSettings, probes: SandboxProbes): Promise<SandboxInUse> {
  const kind = settings.kind ?? 'auto';
  if (kind === 'host') {
    return settings.allow_host_bash
      ? { kind: 'host', description: `${HOST} (sandbox.kind: host)` }
      : none('sandbox.kind is host, but sandbox.allow_host_bash is not true', ALLOW_HOST);
  }
  if (kind === 'just-bash') {
    const justBash = reasonOf(await probes.justBash());
    return justBash === undefined
      ? { kind: 'just-bash', description: 'just-bash (sandbox.kind: just-bash)' }
      : none(
          `sandbox.kind is just-bash, and just-bash cannot start: ${justBash}`,
          'set sandbox.kind: auto to use bubblewrap where it is installed',
        );
  }
  const bubblewrap = reasonOf(await probes.bubblewrap());
  if (bubblewrap === undefined) return { kind: 'bubblewrap', description: 'bubblewrap' };
  if (kind === 'bubblewrap') {
    return none(
      `sandbox.kind is bubblewrap, and bubblewrap cannot start: ${bubblewrap}`,
      `${INSTALL_BUBBLEWRAP}, or set sandbox.kind: auto to fall back on just-bash`,
    );
  }
  const justBash = reasonOf(await probes.justBash());
  if (justBash === undefined) {
    const reason = `bubblewrap unavailable: ${bubblewrap}`;
    return { kind: 'just-bash', description: `just-bash (${reason})`, reason, fix: INSTALL_BUBBLEWRAP };
  }
  const reason = `bubblewrap unavailable: ${bubblewrap}; just-bash unavailable: ${justBash}`;
  return settings.allow_host_bash
    ? { kind: 'host', description: `${HOST} (${reason})`, reason, fix: INSTALL_BUBBLEWRAP }
    : none(reason, `${INSTALL_BUBBLEWRAP}, or ${ALLOW_HOST}`);
}
