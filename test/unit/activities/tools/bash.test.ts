import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBash } from '../../../../activities/tools/bash';
import { NOT_FOUND_HINT } from '../../../../activities/tools/just-bash-runner';
import { machineProbes, type MachineProbes } from '../../../../activities/tools/machine-probes';
import type { SandboxProbe } from '../../../../activities/tools/sandbox';
import type { ToolContext } from '../../../../activities/tools/tool-context';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../../../contracts/tools';
import { describeEachSandbox, SHIPPED_SANDBOXES } from '../../../support/sandboxes';
import {
  appears,
  callTool,
  lateJob,
  lateJobWrote,
  makeFixture,
  removeFixture,
  type Fixture,
} from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
});

afterEach(async () => {
  await removeFixture(fx);
});

const realProbes = machineProbes();

/** A context and probes for calling the bash tool directly, with the bubblewrap probe chosen by the test. */
function context(
  probe: SandboxProbe | 'real',
  sandbox: Partial<SandboxSettings> = {},
  extra: Partial<ToolContext> = {},
): [ToolContext, MachineProbes] {
  return [
    {
      workspace: fx.workspace,
      workspaceReal: fx.workspace,
      sandbox: { ...DEFAULT_SANDBOX, ...sandbox },
      ...extra,
    },
    probe === 'real' ? realProbes : { ...realProbes, bubblewrap: async () => probe },
  ];
}

const NO_BUBBLEWRAP: SandboxProbe = { available: false, reason: 'bwrap was not found on PATH' };
const HOST: Partial<SandboxSettings> = { kind: 'host', allow_host_bash: true };

/** A listening port on the host loopback that counts who reached it. */
function useHostPort(): { port: () => number; connections: () => number } {
  let server: Server;
  let port = 0;
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
  return { port: () => port, connections: () => connections };
}

const connectTo = (port: number): string => `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected && cat <&3`;

describeEachSandbox('bash, escape attempts included', (sandbox) => {
  const bash = (command: string, settings: Partial<SandboxSettings> = {}) =>
    callTool(fx.workspace, 'bash', { command }, { sandbox: { kind: sandbox.kind, ...settings } });

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

  it('cannot read outside the workspace: absolute path, ../, a link made outside, a link it makes', async () => {
    await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
    await symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.workspace, 'link-to-secret'));
    await symlink('../outside', path.join(fx.workspace, 'link-to-outside'));
    const leaks: string[] = [];
    for (const command of [
      `cat ${fx.outside}/secret.txt`,
      'cat ../outside/secret.txt',
      'cat link-to-secret',
      'cat link-to-outside/secret.txt',
      `ln -s ${fx.outside}/secret.txt mine; cat mine`,
      `ln -s ${fx.outside} mine-dir; cat mine-dir/secret.txt`,
    ]) {
      if ((await bash(command)).content.includes('TOP-SECRET')) leaks.push(command);
    }
    expect(leaks).toEqual([]);
  });

  it('cannot write outside the workspace: absolute path, ../, home, system folders, links', async () => {
    await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
    await symlink('../outside', path.join(fx.workspace, 'link-to-outside'));
    const name = `escaped-${path.basename(fx.root)}`;
    const home = path.join(os.homedir(), name);
    try {
      const results = [];
      for (const command of [
        `echo x > ${fx.outside}/planted.txt`,
        'echo x > ../planted.txt',
        `echo x > ${home}`,
        `echo x > /usr/${name}`,
        'echo x > link-to-outside/planted.txt',
        `echo x >> ${fx.outside}/secret.txt`,
        `ln -s ${fx.outside} mine && echo x > mine/planted.txt`,
        `cp /dev/null ${fx.outside}/copied.txt; mv link-to-outside/secret.txt moved.txt`,
      ]) {
        results.push((await bash(command)).content);
      }
      expect(results.join('\n')).toMatch(/read-only file system/i);
      expect(await readdir(fx.outside)).toEqual(['secret.txt']);
      expect(await readFile(path.join(fx.outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET\n');
      expect(await readdir(fx.root)).toEqual(['outside', 'workspace']);
      expect(existsSync(home)).toBe(false);
      expect(existsSync(`/usr/${name}`)).toBe(false);
    } finally {
      await rm(home, { force: true });
    }
  });

  it('passes none of the worker environment in', async () => {
    process.env.TOOLS_TEST_SECRET = 'sk-do-not-leak';
    try {
      const result = await bash('env; echo "[$TOOLS_TEST_SECRET]"; printenv TOOLS_TEST_SECRET');
      expect(result.content).toContain('[]');
      expect(result.content).not.toContain('sk-do-not-leak');
    } finally {
      delete process.env.TOOLS_TEST_SECRET;
    }
  });

  describe('network', () => {
    const host = useHostPort();

    it('has none: a port open on the host loopback cannot be reached', async () => {
      const port = host.port();
      const results = [
        await bash(connectTo(port)),
        await bash(`curl -s --max-time 5 http://127.0.0.1:${port}/`),
      ];
      for (const result of results) expect(result.content).not.toMatch(/connected|hello from the host/);
      expect(host.connections()).toBe(0);
    });
  });

  it('kills a command past its time limit, with whatever it started', async () => {
    const started = Date.now();
    const result = await bash(`${lateJob(2)} echo started; sleep 30`, {
      bash_timeout_seconds: 1,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/\n\[timed out after 1 s: the command was killed\]$/);
    // It had started its job, which was killed with it.
    expect(existsSync(path.join(fx.workspace, 'started'))).toBe(true);
    expect(await lateJobWrote(fx.workspace, 2)).toBe(false);
  });

  it('caps the output', async () => {
    const result = await bash('seq 1 100000', { output_cap_chars: 1000 });
    const output = result.content.slice(0, result.content.lastIndexOf('[exit code: 0]'));
    expect(output.length).toBeLessThanOrEqual(1000);
    expect(output).toMatch(/\n\n\[… 58\d,\d{3} characters omitted …\]\n\n/);
    expect(output.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.content.endsWith('99999\n100000\n[exit code: 0]')).toBe(true);
  });
});

describe('bash on the host', () => {
  const host = useHostPort();

  it('reaches a port the sandboxes cannot (so the network checks above can fail)', async () => {
    const result = await runBash({ command: connectTo(host.port()) }, ...context(NO_BUBBLEWRAP, HOST));
    expect(result.content).toContain('connected\nhello from the host');
    expect(host.connections()).toBe(1);
  });

  it('runs in the workspace when sandbox.kind is host and allow_host_bash is true', async () => {
    const result = await runBash({ command: 'pwd; echo x > ran.txt' }, ...context(NO_BUBBLEWRAP, HOST));
    expect(result).toEqual({ content: `${fx.workspace}\n[exit code: 0]`, is_error: false });
    expect(existsSync(path.join(fx.workspace, 'ran.txt'))).toBe(true);
  });

  it('kills the whole process group on timeout', async () => {
    const result = await runBash(
      { command: `${lateJob(2)} sleep 30`, timeout_seconds: 1 },
      ...context(NO_BUBBLEWRAP, HOST),
    );
    expect(result.content).toContain('timed out after 1 s');
    expect(existsSync(path.join(fx.workspace, 'started'))).toBe(true);
    expect(await lateJobWrote(fx.workspace, 2)).toBe(false);
  });
});

describe('bash choosing its sandbox', () => {
  it('falls back on just-bash where bubblewrap cannot start, even when host bash is allowed', async () => {
    const result = await runBash(
      { command: 'echo hi > made.txt; no-such-program' },
      ...context(NO_BUBBLEWRAP, { allow_host_bash: true }),
    );
    expect(result.content).toBe(
      `bash: no-such-program: command not found\n${NOT_FOUND_HINT}[exit code: 127]`,
    );
    expect(await readFile(path.join(fx.workspace, 'made.txt'), 'utf8')).toBe('hi\n');
  });

  it('refuses to run when sandbox.kind names a sandbox that cannot start, saying why and what to do', async () => {
    await expect(
      runBash({ command: 'touch ran.txt' }, ...context(NO_BUBBLEWRAP, { kind: 'bubblewrap' })),
    ).rejects.toThrow(
      'bash is unavailable: no sandbox could start (sandbox.kind is bubblewrap, and bubblewrap cannot start: ' +
        'bwrap was not found on PATH). To enable it, install bubblewrap (Debian/Ubuntu package "bubblewrap") ' +
        'on the worker machine, or set sandbox.kind: auto to fall back on just-bash.',
    );
    expect(existsSync(path.join(fx.workspace, 'ran.txt'))).toBe(false);
  });

  it('never runs on the host unless allow_host_bash is true, whatever sandbox.kind says', async () => {
    await expect(
      runBash({ command: 'touch ran.txt' }, ...context(NO_BUBBLEWRAP, { kind: 'host' })),
    ).rejects.toThrow(
      'bash is unavailable: no sandbox could start (sandbox.kind is host, but sandbox.allow_host_bash is not ' +
        'true). To enable it, allow unsandboxed commands on the host with `sandbox: {allow_host_bash: true}` ' +
        'in the config.',
    );
    expect(existsSync(path.join(fx.workspace, 'ran.txt'))).toBe(false);
  });
});

describe('bash as an activity', () => {
  const where: [string, Partial<SandboxSettings>, string | undefined][] = [
    ...SHIPPED_SANDBOXES.map((s): [string, Partial<SandboxSettings>, string | undefined] => [
      s.name,
      { kind: s.kind },
      s.missing,
    ]),
    ['the host', HOST, undefined],
  ];
  for (const [name, sandbox, missing] of where) {
    const skipped = missing === undefined ? '' : `: skipped, ${missing}`;
    (missing === undefined ? it : it.skip)(
      `stops the command and what it started on cancellation (${name}${skipped})`,
      async () => {
        const controller = new AbortController();
        const ctx = context('real', sandbox, { signal: controller.signal });
        const running = runBash({ command: `${lateJob(3)} sleep 30` }, ...ctx);
        running.catch(() => undefined);
        // Cancelled once the command has started its job (not after a guess at how long starting takes).
        await appears(fx.workspace, 'started');
        controller.abort(new Error('activity cancelled'));
        await expect(running).rejects.toThrow('activity cancelled');
        expect(await lateJobWrote(fx.workspace, 3)).toBe(false);
      },
    );
  }
});
