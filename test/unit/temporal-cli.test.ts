import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cliCacheDir,
  findTemporalCli,
  missingCliMessage,
  resolveTemporalCli,
  TEMPORAL_CLI_VERSION,
} from '../../worker/temporal-cli';

describe('finding the Temporal CLI', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'temporal-cli-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function fakeBinary(dir: string): string {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'temporal');
    writeFileSync(path, '#!/bin/sh\necho fake\n');
    chmodSync(path, 0o755);
    return path;
  }

  const baseEnv = () => ({ PATH: join(root, 'empty-path'), DURABLE_SUBAGENTS_CACHE: join(root, 'cache') });

  it('prefers TEMPORAL_CLI_PATH over PATH and the cache', () => {
    const explicit = fakeBinary(join(root, 'explicit'));
    const onPath = fakeBinary(join(root, 'bin'));
    fakeBinary(cliCacheDir(baseEnv()));
    const env = { ...baseEnv(), PATH: join(root, 'bin'), TEMPORAL_CLI_PATH: explicit };
    expect(findTemporalCli(env)).toEqual({ path: explicit, source: 'TEMPORAL_CLI_PATH' });
    expect(findTemporalCli({ ...env, TEMPORAL_CLI_PATH: undefined })).toEqual({
      path: onPath,
      source: 'PATH',
    });
  });

  it('uses the cached build, kept per CLI version, when nothing is on PATH', () => {
    const env = baseEnv();
    const cached = fakeBinary(cliCacheDir(env));
    expect(cached).toContain(TEMPORAL_CLI_VERSION);
    expect(findTemporalCli(env)).toEqual({ path: cached, source: 'cache' });
  });

  it('names the bad TEMPORAL_CLI_PATH instead of silently falling back', () => {
    const env = { ...baseEnv(), TEMPORAL_CLI_PATH: join(root, 'missing', 'temporal') };
    expect(() => findTemporalCli(env)).toThrow(
      /TEMPORAL_CLI_PATH: .*missing\/temporal is not an executable file/,
    );
  });

  it('finds nothing, and builds nothing, without a binary or Go', async () => {
    await expect(resolveTemporalCli({ env: baseEnv() })).resolves.toBeUndefined();
  });

  it('tells the user what to install when there is no way to get a server', () => {
    const message = missingCliMessage('getaddrinfo ENOTFOUND');
    expect(message).toMatch(/Install Go/);
    expect(message).toContain(`go install github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`);
    expect(message).toMatch(/TEMPORAL_ADDRESS/);
    expect(message).toContain('getaddrinfo ENOTFOUND');
  });
});
