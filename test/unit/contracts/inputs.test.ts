/**
 * The workflow input schemas: a valid input passes as it is (every recorded history's too, older shapes and
 * continued runs' carries included), a bad one is refused with one line per problem naming the field, the
 * value and what is accepted; system folders are never a workspace.
 */
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkWorkspaceFolder, workspaceFolderProblem } from '../../../client/api';
import { defaultConfig, parseConfig } from '../../../contracts/config';
import {
  assertLeadRunInput,
  InvalidInputError,
  leadRunInputProblems,
  startedLeadRunInputProblems,
  normalizePosixPath,
  subagentInputProblems,
  systemFolderProblem,
  workspaceRootProblem,
} from '../../../contracts/inputs';
import type { LeadRunInput } from '../../../contracts/lead';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';
import { subagentInput } from '../../support/subagent-input';

const lead = (): LeadRunInput =>
  buildLeadRunInput(defaultConfig(), { prompt: 'Do the work.', workspace: '/srv/project', run_id: 'run-1' });

const histories = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'histories');

/** Each recorded lead's and subagent's workflow input, decoded (json/plain payloads). */
function recordedInputs(): [string, string, unknown][] {
  return readdirSync(histories)
    .filter((file) => file.endsWith('.json') && file !== 'index.json')
    .map((file) => {
      const history = JSON.parse(readFileSync(join(histories, file), 'utf8')) as {
        events: {
          workflowExecutionStartedEventAttributes?: {
            workflowType: { name: string };
            input: { payloads: { data: string }[] };
          };
        }[];
      };
      const started = history.events[0].workflowExecutionStartedEventAttributes;
      if (!started) throw new Error(`${file}: the first event is not the start`);
      const data = Buffer.from(started.input.payloads[0].data, 'base64').toString('utf8');
      return [file, started.workflowType.name, JSON.parse(data) as unknown] as [string, string, unknown];
    })
    .filter(([, type]) => type === 'leadRunWorkflow' || type === 'subagentWorkflow');
}

describe('workflow input schemas', () => {
  it('accept what the config builds, and leave it as it is', () => {
    const input = lead();
    const before = JSON.stringify(input);
    expect(leadRunInputProblems(input)).toEqual([]);
    expect(JSON.stringify(input)).toBe(before);
    expect(subagentInputProblems(subagentInput({ workspace: '/srv/project' }))).toEqual([]);
  });

  it('carry the batch settings only when the config enables batches', () => {
    expect(lead().batch).toBeUndefined();
    const config = parseConfig({
      subagents: { batch: { enabled: true, max_running_items: 4, max_live_items: 8 } },
    });
    const input = buildLeadRunInput(config.config, { prompt: 'Do the work.', workspace: '/srv/project' });
    expect(input.batch).toEqual({
      limits: { max_running_items: 4, max_live_items: 8, max_attempts: 2, retry_backoff_seconds: 5 },
      max_items: 10_000,
    });
    expect(leadRunInputProblems(input)).toEqual([]);
    // No agent to start, no batch either.
    const off = parseConfig({ subagents: { enabled: false, batch: { enabled: true } } });
    expect(buildLeadRunInput(off.config, { prompt: 'x', workspace: '/srv/project' }).batch).toBeUndefined();
    expect(() => parseConfig({ subagents: { batch: { max_running_items: 9, max_live_items: 3 } } })).toThrow(
      /subagents\.batch\.max_running_items: 9 .*above max_live_items \(3\)/,
    );
  });

  it.each(recordedInputs())('accept the input recorded in %s', (_file, type, input) => {
    // As the run checks it at its start: older recordings ran with a per-response limit above today's 4.
    const problems =
      type === 'leadRunWorkflow' ? startedLeadRunInputProblems(input) : subagentInputProblems(input);
    expect(problems).toEqual([]);
  });

  it('refuse a per-response limit above 4 at the API, and take it from a run started before the ceiling', () => {
    const input = lead();
    const five = { ...input, limits: { ...input.limits, max_concurrent: 5 } };
    expect(leadRunInputProblems(five)).toEqual(['limits.max_concurrent: 5 is out of range (1–4)']);
    expect(startedLeadRunInputProblems(five)).toEqual([]);
  });

  it('accept a continued run: its carry, a carried ledger, the older carry with the whole transcript', () => {
    const input: LeadRunInput = {
      ...lead(),
      ledger: [
        {
          id: 'call_1',
          run_id: 'run-1',
          description: 'x',
          subagent_type: 'bash',
          status: 'completed',
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:00:00Z',
          workflow_id: 'run-1/task/call_1',
        },
      ],
      carry: {
        messages: [{ role: 'user', content: 'hi' }],
        turns: 3,
        guard_states: { turns: null },
        events: [],
        continued: 1,
      },
    };
    expect(leadRunInputProblems(input)).toEqual([]);
  });

  it('refuse missing fields, relative workspaces, limits of 0 or -1, with the field, value and range', () => {
    const input = lead();
    expect(
      leadRunInputProblems({
        ...input,
        prompt: '',
        scope: { ...input.scope, workspace: 'rel/ws' },
        max_turns: -1,
        tools: ['bash', 'rm'],
        limits: { ...input.limits, max_concurrent: 5, max_total_per_run: 51 },
        token_budget: { ...input.token_budget, max_tokens: 0 },
        model: undefined,
      }),
    ).toEqual([
      'prompt: "" is empty (write some text)',
      'scope.workspace: "rel/ws" is not an absolute path (the workspace must be absolute, e.g. /home/me/project)',
      'model: is missing (a mapping)',
      'tools[1]: "rm" is not a known tool (bash, ls, read_file, write_file, str_replace, glob, grep, web_search, web_fetch, image_search, task, ask_clarification)',
      'token_budget.max_tokens: 0 is out of range (1 or more)',
      'max_turns: -1 is out of range (1 or more)',
      // The config's ranges and messages (subagents.max_concurrent, subagents.max_total_per_run).
      'limits.max_concurrent: 5 is out of range (1–4)',
      'limits.max_total_per_run: 51 is out of range (1–50)',
    ]);
  });

  it('refuse a subagent without its agent', () => {
    const child = subagentInput({ workspace: '/srv/project' });
    expect(subagentInputProblems({ ...child, agent: undefined, depth: 0.5 })).toEqual([
      'agent: is missing (a mapping)',
      'depth: 0.5 is not a whole number (0 or more)',
    ]);
  });

  it('refuse what is not an input at all', () => {
    expect(leadRunInputProblems(undefined)).toEqual(['input is missing (a lead run input)']);
    expect(subagentInputProblems('text')).toEqual(['input is not a subagent input']);
  });

  it('throw one error naming every problem', () => {
    expect(() => assertLeadRunInput({ ...lead(), depth: -1 })).toThrow(InvalidInputError);
    expect(() => assertLeadRunInput({ ...lead(), depth: -1 })).toThrow(
      'lead run input is refused, 1 problem:\n  depth: -1 is out of range (0 or more)',
    );
  });
});

describe('system folders', () => {
  it.each(['/', '/etc', '/etc/nginx', '/usr', '/usr/lib/x', '/bin', '/sbin', '/lib64', '/boot', '/dev/shm'])(
    'refuse %s as a workspace',
    (path) => {
      expect(systemFolderProblem(path)).toMatch(/is a system folder/);
    },
  );

  it.each(['/proc/1', '/sys', '/var', '/root', '/home', '/tmp', '/var/lib', '/etc/../etc', '//etc/'])(
    'refuse %s as a workspace too',
    (path) => {
      expect(systemFolderProblem(path)).toMatch(/is a system folder/);
    },
  );

  it('refuse the home folder and what holds it, not a project below it', () => {
    expect(systemFolderProblem('/home/me', '/home/me')).toMatch(/is a system folder/);
    expect(systemFolderProblem('/data', '/data/users/me')).toMatch(/holds the home folder \/data\/users\/me/);
    expect(systemFolderProblem('/home/me/project', '/home/me')).toBeUndefined();
  });

  it.each([
    '/tmp/run-1',
    '/var/folders/ab/T/x',
    '/var/lib/subagents/ws',
    '/usr/src/app/ws',
    '/srv/p',
    '/root/p',
  ])('accept %s', (path) => {
    expect(systemFolderProblem(path, '/root')).toBeUndefined();
  });

  it('normalize paths without the file system', () => {
    expect(normalizePosixPath('/a//b/./c/../d/')).toBe('/a/b/d');
    expect(normalizePosixPath('/..')).toBe('/');
  });

  it('check workspace.root as the parent of run folders: /tmp and home will do, / and /etc will not', () => {
    expect(workspaceRootProblem('/tmp', '/root')).toBeUndefined();
    expect(workspaceRootProblem('/root', '/root')).toBeUndefined();
    expect(workspaceRootProblem('/', '/root')).toMatch(/is the root folder/);
    expect(workspaceRootProblem('/etc/runs', '/root')).toMatch(/is a system folder/);
    expect(workspaceRootProblem('/home', '/home/me')).toMatch(/holds the home folder/);
  });
});

describe('the workspace on the host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inputs-'));

  it('is made when missing', () => {
    expect(workspaceFolderProblem(join(dir, 'a', 'b'), '/nonexistent-home')).toBeUndefined();
  });

  it('is refused when it is a file, or under one', () => {
    const file = join(dir, 'file.txt');
    writeFileSync(file, 'x');
    expect(workspaceFolderProblem(file, '/nonexistent-home')).toMatch(/is a file, not a folder/);
    expect(workspaceFolderProblem(join(file, 'sub'), '/nonexistent-home')).toMatch(/is a file, not a folder/);
  });

  it('is refused when a symlink leads to a system folder', () => {
    const link = join(dir, 'to-etc');
    symlinkSync('/etc', link);
    expect(workspaceFolderProblem(link, '/nonexistent-home')).toMatch(
      /leads to \/etc, which is a system folder/,
    );
  });

  it('is refused when relative, with an error that names the field', () => {
    expect(workspaceFolderProblem('work')).toMatch(/is not an absolute path/);
    expect(() => checkWorkspaceFolder('/')).toThrow('workspace: "/" is a system folder');
  });
});
