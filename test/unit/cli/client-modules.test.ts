/**
 * A client command (`list`, `status`, …) loads @temporalio/client and the project's client side, never the
 * worker's: not the SDK's worker and its native library, LangChain, the MCP SDK, OpenTelemetry's SDK, nor
 * the project's worker/ and activities/ (issue 29: such a process peaked at ~145 MiB, the client alone is ~76).
 * Each command runs as a user runs it, against a server that is not there, so it goes as far as connecting;
 * a preloaded probe lists require.cache when the process exits.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';

const DIST = join(__dirname, '..', '..', '..');
const CLI = join(DIST, 'client', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'client-modules-'));
const probe = join(dir, 'probe.js');
writeFileSync(
  probe,
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_OUT, " +
    'JSON.stringify(Object.keys(require.cache))));\n',
);

const nodeModule = (name: string) => `${sep}node_modules${sep}${name}`;

/** What a client process must not load: the worker's side, by package or by the project's floor. */
const WORKER_SIDE = [
  nodeModule('@temporalio/worker/'),
  nodeModule('@temporalio/core-bridge/'),
  nodeModule('@langchain/'),
  nodeModule('openai/'),
  nodeModule('langsmith/'),
  nodeModule('@modelcontextprotocol/'),
  nodeModule('@opentelemetry/sdk-'),
  join(DIST, 'worker') + sep,
  join(DIST, 'activities') + sep,
];

/**
 * The config file's loader is in worker/ (the worker process reads the same file) and every command reads
 * the config; it needs yaml, contracts/ and the extensions file's reader only.
 */
const CONFIG_LOADER = [
  join(DIST, 'worker', 'config.js'),
  join(DIST, 'worker', 'mcp-config.js'),
  join(DIST, 'activities', 'extensions-file.js'),
];

const CLIENT_COMMANDS: string[][] = [
  ['list'],
  ['status', 'run-1'],
  ['ledger', 'run-1'],
  ['events', 'run-1'],
  ['watch', 'run-1'],
  ['steps', 'run-1', 'call_1'],
  ['report', 'run-1'],
  ['cancel', 'run-1'],
  ['answer', 'run-1', 'yes'],
  ['approve', 'run-1'],
  ['deny', 'run-1', '--reason', 'no'],
  ['batch', 'status', 'batch-1'],
  ['batch', 'list'],
  ['schedule', 'list'],
];

interface Loaded {
  code: number | null;
  stderr: string;
  modules: string[];
}

async function runCommand(args: string[]): Promise<Loaded> {
  const out = join(dir, `${args.join('-')}.json`);
  const child = spawn(process.execPath, ['--require', probe, CLI, ...args], {
    cwd: dir,
    // Port 1: nothing listens there, so the command fails once it connects, its modules all loaded.
    env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', MODULES_OUT: out },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr, modules: JSON.parse(readFileSync(out, 'utf8')) as string[] };
}

describe('a client command loads none of the worker side', () => {
  // All at once: each waits out its connect timeout (5 s) before it fails.
  const runs = new Map<string, Promise<Loaded>>();
  beforeAll(() => {
    for (const args of CLIENT_COMMANDS) {
      const run = runCommand(args);
      run.catch(() => undefined); // its test reports the failure
      runs.set(args.join(' '), run);
    }
  });

  it.each(CLIENT_COMMANDS.map((args) => args.join(' ')))('subagents %s', async (command) => {
    const { code, stderr, modules } = await (runs.get(command) as Promise<Loaded>);
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining('cannot reach the Temporal server at 127.0.0.1:1'),
    });
    expect(modules).toContain(join(DIST, 'client', 'connection.js'));
    const workerSide = modules.filter(
      (path) => WORKER_SIDE.some((part) => path.includes(part)) && !CONFIG_LOADER.includes(path),
    );
    expect(workerSide).toEqual([]);
  });
});
