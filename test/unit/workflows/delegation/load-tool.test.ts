import {
  buildLoadToolSpec,
  buildTaskToolSpec,
  parseLoadArgs,
  providerWording,
  type LoadToolOptions,
} from '../../../../workflows/delegation/task-tool';
import { applyDelegationLimits } from '../../../../workflows/delegation/limits';
import { PROVIDER_CAPABILITIES } from '../../../../contracts/subagent-providers';

function spec(options: Partial<LoadToolOptions> = {}) {
  return buildLoadToolSpec({
    toolName: 'subagent_acp',
    inheritsParentContext: false,
    maxConcurrent: 3,
    maxTotalPerRun: 6,
    ...options,
  });
}

function promptDescription(parameters: Record<string, unknown>): string {
  return (parameters.properties as Record<string, { description?: string }>).prompt.description ?? '';
}

describe('a tool load as the model sees it', () => {
  it('shows exactly description and prompt, under the load’s name, and nothing of its provider', () => {
    const { name, parameters } = spec();
    expect(name).toBe('subagent_acp');
    expect(Object.keys(parameters.properties as object)).toEqual(['description', 'prompt']);
    expect([...(parameters.required as string[])].sort()).toEqual(['description', 'prompt']);
    expect(parameters.additionalProperties).toBe(false);
    expect(JSON.stringify(parameters)).not.toMatch(/provider|subagent_type|acp/);
  });

  it('words a fresh-conversation provider (spawn, ACP, A2A) as one that does not see this conversation', () => {
    for (const type of ['spawn', 'acp', 'a2a'] as const) {
      const { description, parameters } = spec({
        inheritsParentContext: PROVIDER_CAPABILITIES[type].inherits_parent_context,
      });
      expect(description).toContain('it does not see this conversation, so the prompt must stand alone');
      expect(promptDescription(parameters)).toContain('It does not see this conversation');
      expect(description).not.toContain('seeded');
    }
  });

  it('words fork as seeded with the conversation’s completed turns, stating only what is new', () => {
    const { description, parameters } = spec({
      toolName: 'subagent_fork',
      inheritsParentContext: PROVIDER_CAPABILITIES.fork.inherits_parent_context,
    });
    expect(description).toContain("The subagent is seeded with this conversation's completed turns");
    expect(promptDescription(parameters)).toContain('state only what is new');
    expect(description).not.toContain('does not see this conversation');
  });

  it('adds the load’s own description after the provider’s wording, and the limits it shares', () => {
    const { description } = spec({ description: 'A coding agent for changes in the workspace.' });
    const wording = providerWording(false).tool;
    expect(description.indexOf('A coding agent for changes in the workspace.')).toBeGreaterThan(
      description.indexOf(wording),
    );
    expect(description).toContain(
      "It shares the run's delegation limits with task and every other delegation tool: at most 3 delegation " +
        'calls per response in all, at most 6 delegations in this run.',
    );
  });

  it('leaves the task load’s wording to its provider, as before', () => {
    const agents = [{ name: 'general-purpose', description: 'A capable agent.' }];
    const limits = { maxConcurrent: 3, maxTotalPerRun: 6 };
    expect(buildTaskToolSpec({ provider: 'spawn', agents, ...limits }).description).toContain(
      providerWording(false).tool,
    );
    expect(buildTaskToolSpec({ provider: 'fork', agents, ...limits }).description).toContain(
      providerWording(true).tool,
    );
  });
});

describe('a tool load’s arguments', () => {
  it('take a label and a prompt', () => {
    expect(parseLoadArgs('{"description":"Fix it","prompt":"Fix the bug."}', 'subagent_acp')).toEqual({
      ok: true,
      args: { description: 'Fix it', prompt: 'Fix the bug.' },
    });
  });

  it('refuse anything else, naming the tool and what it accepts', () => {
    expect(parseLoadArgs('{"description":"x","prompt":" ","subagent_type":"bash"}', 'subagent_acp')).toEqual({
      ok: false,
      error: [
        'Invalid subagent_acp arguments:',
        '- prompt: is blank (the task for the subagent)',
        '- subagent_type: not an argument of subagent_acp (accepted: description, prompt)',
      ].join('\n'),
    });
    const notJson = parseLoadArgs('{', 'subagent_fork');
    expect(notJson.ok).toBe(false);
    expect(!notJson.ok && notJson.error).toMatch(
      /^Invalid subagent_fork arguments: they are not valid JSON \(.*\); send an object with description, prompt\.$/,
    );
  });
});

describe('the delegation limits over every delegation tool', () => {
  const call = (name: string, id: string) => ({ id, name, args: '{}' });
  const message = {
    role: 'assistant' as const,
    content: '',
    tool_calls: [call('task', 'a'), call('subagent_acp', 'b'), call('ls', 'c'), call('subagent_fork', 'd')],
  };
  const isDelegation = (c: { name: string }) => ['task', 'subagent_acp', 'subagent_fork'].includes(c.name);

  it('count load calls with task calls per response', () => {
    const outcome = applyDelegationLimits(message, {
      maxConcurrent: 2,
      maxTotalPerRun: 6,
      usedThisRun: 0,
      isDelegation,
    });
    expect(outcome.message.tool_calls?.map((c) => c.id)).toEqual(['a', 'b', 'c']);
    expect(outcome.dropped.map((c) => c.id)).toEqual(['d']);
  });

  it('remove every load call once the run’s total is spent', () => {
    const outcome = applyDelegationLimits(message, {
      maxConcurrent: 3,
      maxTotalPerRun: 2,
      usedThisRun: 2,
      isDelegation,
    });
    expect(outcome.capped).toBe(true);
    expect(outcome.message.tool_calls?.map((c) => c.id)).toEqual(['c']);
  });

  it('count task calls alone when no load is given (as before)', () => {
    const outcome = applyDelegationLimits(message, { maxConcurrent: 1, maxTotalPerRun: 6, usedThisRun: 0 });
    expect(outcome.message.tool_calls?.map((c) => c.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});
