/**
 * The packages only some configs use (optionalDependencies, left out by a light install): a config that needs
 * a missing one gets an error naming the package, what needed it and the command that adds it, and doctor's
 * Packages check says the same before anything runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagesCheck } from '../../../cli/doctor';
import { defaultConfig, type Config } from '../../../contracts/config';
import {
  INSTALL_OPTIONAL,
  isInstalled,
  loadOptional,
  MissingPackageError,
  OPTIONAL_PACKAGES,
} from '../../../payloads/optional-packages';

const ROOT = join(__dirname, '..', '..', '..', '..');
const ABSENT = 'durable-subagents-absent-package';

describe('optional packages', () => {
  it('are package.json’s optionalDependencies', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    expect([...OPTIONAL_PACKAGES].sort()).toEqual(Object.keys(manifest.optionalDependencies).sort());
  });

  it('a missing one: an error that names the package, what needs it and how to install it', () => {
    const load = () =>
      loadOptional(
        'the S3 payload store (payloads.store: s3)',
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require that cannot resolve, as a light install's
        () => require(`${ABSENT}/client.js`) as unknown,
        [ABSENT],
      );
    expect(load).toThrow(MissingPackageError);
    expect(load).toThrow(
      `the S3 payload store (payloads.store: s3) needs the package ${ABSENT}, which this install left out ` +
        `(it is optional; \`npm install --omit=optional\` skips it): run \`${INSTALL_OPTIONAL}\` in the project to add it`,
    );
  });

  it('an installed one loads; a missing file of an installed package and other errors stay what they are', () => {
    expect(
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the loader's own shape
      loadOptional('a test', () => (require('yaml') as { stringify: unknown }).stringify, ['yaml']),
    ).toBeInstanceOf(Function);
    const missingFile = () =>
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file that yaml does not have
      loadOptional('a test', () => require('yaml/no-such-file.js') as unknown, ['yaml']);
    expect(missingFile).toThrow(/Cannot find module 'yaml\/no-such-file.js'/);
    expect(missingFile).not.toThrow(MissingPackageError);
    expect(() =>
      loadOptional('a test', () => {
        throw new TypeError('broken');
      }),
    ).toThrow(TypeError);
  });

  it('isInstalled: by whether the package resolves from the project', () => {
    expect(isInstalled('yaml')).toBe(true);
    expect(isInstalled(ABSENT)).toBe(false);
  });
});

describe('the Packages check of doctor', () => {
  const context = (config: Config, env: NodeJS.ProcessEnv = {}) => ({
    env,
    config: { config, warnings: [] },
  });
  const none = () => false;

  it('a light install with a config that needs none of them: ok, and what was left out', () => {
    const check = packagesCheck(context(defaultConfig()), none);
    expect(check.status).toBe('ok');
    expect(check.lines).toEqual([
      `optional packages left out (a light install): ${OPTIONAL_PACKAGES.join(', ')}`,
    ]);
  });

  it('a config that needs a missing one: missing, which feature needs which package, and the command', () => {
    const config = defaultConfig();
    config.payloads.store = 's3';
    config.tracing.enabled = true;
    const check = packagesCheck(
      context(config, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: 'k' }),
      none,
    );
    expect(check.status).toBe('missing');
    expect(check.lines.slice(0, 3)).toEqual([
      'payloads.store: s3 needs @aws-sdk/client-s3, not installed',
      'the openai model provider needs @langchain/core, @langchain/openai, not installed',
      'tracing.enabled needs @opentelemetry/core, @opentelemetry/resources, @opentelemetry/sdk-trace-base, @temporalio/interceptors-opentelemetry, not installed',
    ]);
    expect(check.fix).toBe(`${INSTALL_OPTIONAL} (in the project)`);
  });

  it('everything installed (this checkout): ok', () => {
    const config = defaultConfig();
    config.payloads.store = 's3';
    expect(packagesCheck(context(config))).toEqual({
      name: 'Packages',
      status: 'ok',
      lines: ['installed for this config: payloads.store: s3', 'every optional package is installed'],
    });
  });
});
