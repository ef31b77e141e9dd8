import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBash } from '../../../activities/tools/bash';
import { detectBubblewrap, type SandboxProbe } from '../../../activities/tools/sandbox';
import type { ToolContext } from '../../../activities/tools/tool-context';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../../contracts/tools';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
});

afterEach(async () => {
  await removeFixture(fx);
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A context for calling the bash tool directly, with the sandbox probe chosen by the test. */
function context(
  probe: SandboxProbe,
  sandbox: Partial<SandboxSettings> = {},
  extra: Partial<ToolContext> = {},
): ToolContext {
  return {
    workspace: fx.workspace,
    workspaceReal: fx.workspace,
    sandbox: { ...DEFAULT_SANDBOX, ...sandbox },
    probeSandbox: async () => probe,
    ...extra,
  };
}

const NO_SANDBOX: SandboxProbe = { available: false, reason: 'bwrap was not found on PATH' };

const bash = (command: string, sandbox: Partial<SandboxSettings> = {}) =>
  callTool(fx.workspace, 'bash', { command }, { sandbox });

describe('bash in the bubblewrap sandbox', () => {
  it('can start on this machine', async () => {
    // On failure this shows the probe's reason: the command that failed and its stderr.
    expect(await detectBubblewrap()).toEqual({ available: true });
  });

  it('runs in the workspace, reports the exit code, and its writes there reach the host', async () => {
    const result = await bash('pwd; echo made > made.txt; echo oops >&2; exit 3');
    expect(result).toMatchObject({ is_error: false });
    expect(result.content).toBe(`${fx.workspace}\noops\n[exit code: 3]`);
    expect(await readFile(path.join(fx.workspace, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('cannot read the host /etc/passwd', async () => {
    const hostPasswd = readFileSync('/etc/passwd', 'utf8').split('\n')[0];
    const result = await bash('cat /etc/passwd');
    expect(result.content).toContain('No such file or directory');
    expect(result.content).toMatch(/\[exit code: [1-9]\d*\]$/);
    expect(result.content).not.toContain(hostPasswd);
  });

  it('cannot see or write anything outside the workspace', async () => {
    await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
    const home = path.join(os.homedir(), `escaped-${path.basename(fx.root)}`);
    try {
      const result = await bash(
        `cat ${fx.outside}/secret.txt; echo x > ${fx.outside}/planted.txt; echo x > ../escaped.txt; ` +
          `echo x > ${home}; echo x > /usr/escaped-${path.basename(fx.root)}; echo done`,
      );
      expect(result.content).not.toContain('TOP-SECRET');
      expect(result.content).toContain('Read-only file system');
      expect(existsSync(path.join(fx.outside, 'planted.txt'))).toBe(false);
      expect(existsSync(path.join(fx.root, 'escaped.txt'))).toBe(false);
      expect(existsSync(home)).toBe(false);
    } finally {
      await rm(home, { force: true });
    }
  });

  it('passes none of the worker environment in', async () => {
    process.env.TOOLS_TEST_SECRET = 'sk-do-not-leak';
    try {
      expect((await bash('env')).content).not.toContain('sk-do-not-leak');
    } finally {
      delete process.env.TOOLS_TEST_SECRET;
    }
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    beforeEach(async () => {
      connections = 0;
      server = createServer((socket) => {
        connections += 1;
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    afterEach(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const connect = (): string => `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected && cat <&3`;

    it('has none: a port open on the host loopback cannot be reached', async () => {
      const result = await bash(connect());
      expect(result.content).not.toContain('connected');
      expect(connections).toBe(0);
    });

    it('the same command does reach the port from the host (so the check above can fail)', async () => {
      const result = await runBash({ command: connect() }, context(NO_SANDBOX, { allow_host_bash: true }));
      expect(result.content).toContain('connected\nhello from the host');
      expect(connections).toBe(1);
    });
  });

  it('kills a command past its time limit, with whatever it started', async () => {
    const started = Date.now();
    const result = await bash('(sleep 2; echo late > late.txt) & echo started; sleep 30', {
      bash_timeout_seconds: 1,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({
      is_error: true,
      content: 'started\n[timed out after 1 s: the command was killed]',
    });
    await sleep(2500);
    expect(existsSync(path.join(fx.workspace, 'late.txt'))).toBe(false);
  });

  it('caps the output', async () => {
    const result = await bash('seq 1 100000', { output_cap_chars: 1000 });
    expect(result.content).toContain('[output truncated: 1000 of 588895 chars shown]');
    expect(result.content.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.content.endsWith('99999\n100000\n[exit code: 0]')).toBe(true);
  });

  it('refuses a timeout above the configured limit', async () => {
    const result = await callTool(fx.workspace, 'bash', { command: 'true', timeout_seconds: 600 });
    expect(result).toMatchObject({
      is_error: true,
      content: "timeout_seconds: 600 is above this agent's limit (at most 120)",
    });
  });
});

describe('bash without a sandbox', () => {
  it('is refused, saying why and how to enable host bash, unless the config allows it', async () => {
    await expect(runBash({ command: 'touch ran.txt' }, context(NO_SANDBOX))).rejects.toThrow(
      'bash is unavailable: no sandbox could start (bwrap was not found on PATH). To enable it, install ' +
        'bubblewrap on the worker machine, or allow unsandboxed commands on the host with ' +
        '`sandbox: {allow_host_bash: true}` in the config.',
    );
    expect(existsSync(path.join(fx.workspace, 'ran.txt'))).toBe(false);
  });

  it('runs on the host in the workspace when allow_host_bash is true', async () => {
    const result = await runBash(
      { command: 'pwd; echo x > ran.txt' },
      context(NO_SANDBOX, { allow_host_bash: true }),
    );
    expect(result).toEqual({ content: `${fx.workspace}\n[exit code: 0]`, is_error: false });
    expect(existsSync(path.join(fx.workspace, 'ran.txt'))).toBe(true);
  });

  it('kills the whole process group on timeout', async () => {
    const result = await runBash(
      { command: '(sleep 2; echo late > late.txt) & sleep 30', timeout_seconds: 1 },
      context(NO_SANDBOX, { allow_host_bash: true }),
    );
    expect(result.content).toContain('timed out after 1 s');
    await sleep(2500);
    expect(existsSync(path.join(fx.workspace, 'late.txt'))).toBe(false);
  });
});

describe('bash as an activity', () => {
  it.each([
    ['in the sandbox', { available: true } as SandboxProbe],
    ['on the host', NO_SANDBOX],
  ])('stops the command and what it started on cancellation (%s)', async (_where, probe) => {
    if (probe.available) expect(await detectBubblewrap()).toEqual({ available: true });
    const controller = new AbortController();
    const ctx = context(probe, { allow_host_bash: true }, { signal: controller.signal });
    const running = runBash({ command: '(sleep 3; echo late > late.txt) & sleep 30' }, ctx);
    await sleep(2200);
    controller.abort(new Error('activity cancelled'));
    await expect(running).rejects.toThrow('activity cancelled');
    await sleep(1500);
    expect(existsSync(path.join(fx.workspace, 'late.txt'))).toBe(false);
  });
});
