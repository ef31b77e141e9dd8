/**
 * `subagentWorkflow` against the real server with the scripted model: each guard's outcome, provider
 * errors and retries, tool confinement and the tool filter, the bash sandbox, and the wall clock.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { subagentResult } from '../../client/api';
import { subagentStepsQuery } from '../../contracts/queries';
import type { SubagentStep } from '../../contracts/steps';
import type { SubagentInput, SubagentResult } from '../../contracts/subagent';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentWorkflow } from '../../workflows/subagent';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { SHIPPED_SANDBOXES, sandboxRuns } from '../support/sandboxes';
import { subagentInput, tempDir, writeScript, type SubagentInputOptions } from '../support/subagent-input';

const testClient = useTestClient();

async function run(input: SubagentInput): Promise<{ result: SubagentResult; steps: SubagentStep[] }> {
  const taskQueue = uniqueTaskQueue('subagent');
  return withProjectWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/${input.task_id}`,
      args: [input],
    });
    const result = await subagentResult(handle);
    return { result, steps: await handle.query(subagentStepsQuery, 0) };
  });
}

function scripted(
  script: ModelScriptFileInput,
  options: Omit<SubagentInputOptions, 'workspace' | 'scriptFile'> = {},
) {
  const dir = tempDir('subagent');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return { workspace, input: subagentInput({ ...options, workspace, scriptFile: writeScript(dir, script) }) };
}

const usage = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens });

describe('subagentWorkflow', () => {
  it('completes: runs the tools the model asks for and returns its answer with usage and a digest', async () => {
    const { input, workspace } = scripted({
      scripts: [
        {
          turns: [
            {
              content: 'Writing the file.',
              tool_calls: [{ name: 'write_file', args: { path: 'notes/a.txt', content: 'alpha' } }],
              usage: usage(100, 10),
            },
            {
              content: '',
              tool_calls: [{ name: 'read_file', args: { path: 'notes/a.txt' } }],
              usage: usage(120, 5),
            },
            { content: 'The file says alpha.', usage: usage(140, 7) },
          ],
        },
      ],
    });
    const { result, steps } = await run(input);

    expect(result).toMatchObject({
      status: 'completed',
      result: 'The file says alpha.',
      result_brief: 'The file says alpha.',
      turns: 3,
      model_name: 'scripted/test',
      token_usage: { input_tokens: 360, output_tokens: 22, total_tokens: 382 },
    });
    expect(result.stop_reason).toBeUndefined();
    expect(result.result_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(workspace, 'notes/a.txt'), 'utf8')).toBe('alpha');
    const readStep = steps.find((s) => s.kind === 'tool' && s.name === 'read_file');
    expect(readStep?.text).toContain('alpha');
    expect(steps.map((s) => s.kind)).toEqual(['ai', 'tool', 'ai', 'tool', 'ai']);
  });

  it('completed + token_capped: warns once at the threshold, then stops at the budget with the text so far', async () => {
    const { input } = scripted(
      {
        scripts: [
          {
            repeat_last: true,
            turns: [
              { content: 'Step one done.', tool_calls: [{ name: 'ls', args: {} }], usage: usage(700, 0) },
              {
                content: 'Step two done.',
                tool_calls: [{ name: 'ls', args: { path: 'x' } }],
                usage: usage(200, 0),
              },
              {
                content: 'Almost there.',
                tool_calls: [{ name: 'ls', args: { path: 'y' } }],
                usage: usage(200, 0),
              },
            ],
          },
        ],
      },
      { config: { subagents: { token_budget: { max_tokens: 1000, warn_threshold: 0.7 } } } },
    );
    const { result } = await run(input);
    expect(result).toMatchObject({
      status: 'completed',
      stop_reason: 'token_capped',
      result: 'Almost there.',
      turns: 3,
    });
    expect(result.token_usage?.total_tokens).toBe(1100);
  });

  it('completed + turn_capped: the last turn still asking for tools ends the run with the last text', async () => {
    const { input } = scripted(
      {
        scripts: [
          {
            turns: [
              { content: 'Looked at the root.', tool_calls: [{ name: 'ls', args: {} }] },
              { content: '', tool_calls: [{ name: 'ls', args: { path: 'a' } }] },
              { content: '', tool_calls: [{ name: 'ls', args: { path: 'b' } }] },
            ],
          },
        ],
      },
      { config: { subagents: { agents: { 'general-purpose': { max_turns: 3 } } } } },
    );
    const { result } = await run(input);
    expect(result).toMatchObject({
      status: 'completed',
      stop_reason: 'turn_capped',
      result: 'Looked at the root.',
      turns: 3,
    });
  });

  it('failed + turn_capped when the turns run out with no usable text', async () => {
    const { input } = scripted(
      { scripts: [{ repeat_last: true, turns: [{ content: '', tool_calls: [{ name: 'ls', args: {} }] }] }] },
      { config: { subagents: { agents: { 'general-purpose': { max_turns: 2 } } } } },
    );
    const { result } = await run(input);
    expect(result).toMatchObject({ status: 'failed', stop_reason: 'turn_capped', turns: 2 });
    expect(result.result).toBeUndefined();
    expect(result.error).toMatch(/turn budget/);
  });

  it('completed + loop_capped: the same tool call set five times stops the run', async () => {
    const { input } = scripted({
      scripts: [
        {
          repeat_last: true,
          turns: [{ content: 'Checking again.', tool_calls: [{ name: 'ls', args: {} }] }],
        },
      ],
    });
    const { result } = await run(input);
    expect(result).toMatchObject({
      status: 'completed',
      stop_reason: 'loop_capped',
      result: 'Checking again.',
      turns: 5,
    });
  });

  it('timed_out: the wall clock cancels a slow model call and keeps what was produced', async () => {
    const { input } = scripted(
      {
        scripts: [
          {
            turns: [
              { content: 'First findings.', tool_calls: [{ name: 'ls', args: {} }] },
              { content: 'never', delay_ms: 60_000 },
            ],
          },
        ],
      },
      { config: { subagents: { agents: { 'general-purpose': { timeout_seconds: 3 } } } } },
    );
    const started = Date.now();
    const { result } = await run(input);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result).toMatchObject({
      status: 'timed_out',
      error: 'Execution timed out after 3 seconds',
      result: 'First findings.',
    });
  });

  it('failed on a provider 400, with the provider message, marked as an error fallback', async () => {
    const { input } = scripted({
      scripts: [
        { turns: [{ error: { status: 400, message: "Invalid 'messages': expected a non-empty array" } }] },
      ],
    });
    const { result } = await run(input);
    expect(result).toMatchObject({ status: 'failed', error_fallback: true, turns: 1 });
    expect(result.error).toContain("Invalid 'messages': expected a non-empty array");
    expect(result.result).toBeUndefined();
  });

  it('completes after a provider answered 429 twice (Temporal retries the model activity)', async () => {
    const { input } = scripted({
      scripts: [
        {
          turns: [
            {
              content: 'Done despite the rate limit.',
              fail_attempts: [
                { status: 429, message: 'rate limited' },
                { status: 429, message: 'rate limited' },
              ],
            },
          ],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('retry');
    const workflowId = `${taskQueue}/task/call_1`;
    const result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(subagentWorkflow, { taskQueue, workflowId, args: [input] }),
    );
    expect(result).toMatchObject({ status: 'completed', result: 'Done despite the rate limit.', turns: 1 });
    const history = await testClient().workflow.getHandle(workflowId).fetchHistory();
    const started = history.events?.filter((e) => e.activityTaskStartedEventAttributes) ?? [];
    expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([3]);
  });

  it('refuses paths that leave the workspace, through .. and through a symlink', async () => {
    const { input, workspace } = scripted({
      scripts: [
        {
          turns: [
            {
              content: '',
              tool_calls: [
                { name: 'read_file', args: { path: '../../../../etc/passwd' } },
                { name: 'write_file', args: { path: 'link/escaped.txt', content: 'x' } },
              ],
            },
            { content: 'Could not do it.' },
          ],
        },
      ],
    });
    const outside = tempDir('outside');
    symlinkSync(outside, join(workspace, 'link'));
    const { result, steps } = await run(input);
    expect(result.status).toBe('completed');
    const toolSteps = steps.filter((s) => s.kind === 'tool');
    expect(toolSteps.map((s) => s.kind === 'tool' && s.is_error)).toEqual([true, true]);
    expect(toolSteps[0].text).not.toMatch(/root:/);
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
  });

  it('refuses at execution a tool the filter denies, even when the model names it', async () => {
    const { input, workspace } = scripted(
      {
        scripts: [
          {
            turns: [
              {
                content: '',
                tool_calls: [{ name: 'write_file', args: { path: 'denied.txt', content: 'x' } }],
              },
              { content: 'Could not write.' },
            ],
          },
        ],
      },
      { config: { subagents: { agents: { 'general-purpose': { tools: { deny: ['write_file'] } } } } } },
    );
    expect(input.agent.tools).not.toContain('write_file');
    const { steps } = await run(input);
    const toolStep = steps.find((s) => s.kind === 'tool');
    expect(toolStep).toMatchObject({ kind: 'tool', name: 'write_file', is_error: true });
    expect(toolStep?.text).toMatch(/not available/);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
  });

  for (const sandbox of SHIPPED_SANDBOXES) {
    // Where a sandbox cannot start its case is shown skipped (a failure under SUBAGENTS_REQUIRE_SANDBOX=1).
    (sandboxRuns(sandbox) ? it : it.skip)(
      `runs bash in the sandbox (${sandbox.name}): the workspace is writable, /etc/passwd and the rest of the disk are not`,
      async () => {
        const { kind } = sandbox;
        const outside = tempDir('bash-outside');
        const { input, workspace } = scripted(
          {
            scripts: [
              {
                turns: [
                  {
                    content: '',
                    tool_calls: [
                      { name: 'bash', args: { command: 'echo inside > made-here.txt && cat made-here.txt' } },
                      { name: 'bash', args: { command: 'cat /etc/passwd' } },
                      { name: 'bash', args: { command: `echo escaped > ${outside}/escaped.txt` } },
                    ],
                  },
                  { content: 'Done.' },
                ],
              },
            ],
          },
          { agent: 'bash', config: { sandbox: { kind } } },
        );
        const { steps } = await run(input);
        const [inside, passwd, escape] = steps.filter((s) => s.kind === 'tool');
        expect(inside.text).toContain('inside');
        expect(readFileSync(join(workspace, 'made-here.txt'), 'utf8').trim()).toBe('inside');
        expect(passwd.text).not.toMatch(/root:x?:0:0/);
        expect(escape.text).not.toBe('');
        expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
      },
    );
  }
});
