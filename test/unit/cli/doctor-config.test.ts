import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configCheck } from '../../../cli/doctor';
import { loadConfig } from '../../../client/config';
import { tempDir } from '../../support/subagent-input';

/** A DeerFlow user's file: sections this project reads and ignores, DeerFlow keys it drops. */
const DEERFLOW_STYLE = `
config_version: 34
log_level: info
scheduler: {enabled: true}
title: {enabled: true}
lead: {max_turns: 30}
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
  ls_output_max_chars: 20000
tool_search:
  enabled: false
  cache_ttl_seconds: 60
loop_detection: {enabled: true}
`;

describe('doctor: the config in one screen', () => {
  it('lists the sections read, each warning, and the sections ignored', () => {
    const file = join(tempDir('doctor-config'), 'config.yaml');
    writeFileSync(file, DEERFLOW_STYLE);
    const check = configCheck({ config: loadConfig(file, {}) });
    expect(check.status).toBe('ok');
    expect(check.lines[0]).toBe(file);
    expect(check.lines[1]).toBe('reads 4 sections: lead, sandbox, tool_search, loop_detection');
    expect(check.lines).toContain(
      'warns: sandbox: ignoring DeerFlow keys this project does not use: ls_output_max_chars',
    );
    expect(check.lines).toContain(
      'warns: ignoring DeerFlow keys this project does not read (yet): tool_search.cache_ttl_seconds',
    );
    expect(check.lines.at(-1)).toBe('ignores 4 sections: config_version, log_level, scheduler, title');
    // The ignored sections are said once, in their own line, not again among the warnings.
    expect(check.lines.filter((line) => line.includes('config_version'))).toHaveLength(1);
  });

  it('says the defaults are used without a file, and why a file cannot be read', () => {
    expect(configCheck({ config: loadConfig(undefined, {}) }).lines).toEqual([
      'none: the defaults (--config FILE reads one)',
    ]);
    const check = configCheck({
      config: { error: 'config file x has 1 problem:\n  lead.max_turns: 0 is out of range' },
    });
    expect(check).toMatchObject({ status: 'missing', fix: 'fix the config file, or run without --config' });
    expect(check.lines).toEqual(['config file x has 1 problem:', '  lead.max_turns: 0 is out of range']);
  });
});
