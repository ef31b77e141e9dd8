/**
 * The run scope: an input recorded before it is read into it (every recorded history's included), and what a
 * child and a batch item are handed is the run's scope, with only what changes with depth changed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBatchInput } from '../../../contracts/config/batch-input';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';
import { parseConfig } from '../../../contracts/config';
import {
  batchInputProblems,
  leadRunInputProblems,
  startedLeadRunInputProblems,
  subagentInputProblems,
} from '../../../contracts/inputs';
import type { LeadRunInput } from '../../../contracts/lead';
import {
  batchItemScope,
  childScope,
  scoped,
  scopedInput,
  type RunScope,
  type UnscopedInput,
} from '../../../contracts/run-scope';

const guardrails = {
  approval_timeout_seconds: 60,
  run: {
    provider: 'allowlist' as const,
    denied_tools: ['bash'],
    fail_closed: true,
    unattended: 'deny' as const,
  },
};

/** A config with every run-wide setting on, as a user writes it. */
function fullConfig() {
  return parseConfig({
    lead: { user_id: 'alice', fairness_key: 'team-a' },
    summarization: { enabled: true },
    clarification: { enabled: true },
    guardrails: {
      enabled: true,
      provider: { use: 'deerflow.guardrails.builtin:AllowlistProvider', config: { denied_tools: ['bash'] } },
    },
  }).config;
}

const lead = (): LeadRunInput =>
  buildLeadRunInput(fullConfig(), { prompt: 'Do the work.', workspace: '/srv/project', run_id: 'run-1' });

/** The same input as a starter wrote it before the scope: the run's settings at the top level. */
function unscoped(input: LeadRunInput): UnscopedInput<LeadRunInput> {
  const { scope, limits, ...rest } = input;
  const { fairness_key: fairnessKey, ...topLevel } = scope;
  return {
    ...rest,
    ...topLevel,
    limits: { ...limits, ...(fairnessKey !== undefined && { fairness_key: fairnessKey }) },
  };
}

describe('an input recorded before the run scope', () => {
  it('is read into the shape a new one has, the lead’s fairness key out of its limits', () => {
    const input = lead();
    const old = unscoped(input);
    expect(old).not.toHaveProperty('scope');
    expect((old.limits as Record<string, unknown>).fairness_key).toBe('team-a');
    expect(scoped<LeadRunInput>(old)).toEqual(input);
    expect(scoped<LeadRunInput>(old).scope).toMatchObject({ user_id: 'alice', fairness_key: 'team-a' });
  });

  it('passes the checks a new input passes, and fails them with the same problems', () => {
    expect(leadRunInputProblems(unscoped(lead()))).toEqual([]);
    const bad = { ...unscoped(lead()), workspace: 'rel/ws' };
    expect(leadRunInputProblems(bad)).toEqual([
      'scope.workspace: "rel/ws" is not an absolute path (the workspace must be absolute, e.g. /home/me/project)',
    ]);
  });

  it('comes back as it is when it is a new one, or not an input at all', () => {
    const input = lead();
    expect(scopedInput(input)).toBe(input);
    expect(scopedInput({ prompt: 'alone' })).toEqual({ prompt: 'alone' });
    expect(scopedInput('text')).toBe('text');
  });

  it('takes a fairness key a new lead input still has in its limits', () => {
    const input = lead();
    const { fairness_key: _key, ...scope } = input.scope;
    const moved = scoped<LeadRunInput>({
      ...input,
      scope,
      limits: { ...input.limits, fairness_key: 'team-b' } as LeadRunInput['limits'],
    });
    expect(moved.scope.fairness_key).toBe('team-b');
    expect(moved.limits).not.toHaveProperty('fairness_key');
  });

  const histories = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'histories');
  const recorded = readdirSync(histories)
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
      const started = history.events[0].workflowExecutionStartedEventAttributes!;
      const data = Buffer.from(started.input.payloads[0].data, 'base64').toString('utf8');
      return [file, started.workflowType.name, JSON.parse(data) as Record<string, unknown>] as const;
    })
    .filter(([, type]) => ['leadRunWorkflow', 'subagentWorkflow', 'batchWorkflow'].includes(type))
    .filter(([, , input]) => 'workspace' in input);

  it('holds recorded inputs of every kind from before the scope', () => {
    const kinds = new Set(recorded.map(([, type]) => type));
    expect([...kinds].sort()).toEqual(['batchWorkflow', 'leadRunWorkflow', 'subagentWorkflow']);
  });

  it.each(recorded)(
    '%s: every run-wide setting it recorded is in its scope, and it passes its check',
    (_f, type, input) => {
      const read = scopedInput(input) as { scope: Record<string, unknown> };
      for (const key of [
        'workspace',
        'sandbox',
        'loop_detection',
        'user_id',
        'guardrails',
        'skills',
        'summarization',
      ]) {
        if (input[key] !== undefined) expect(read.scope[key]).toEqual(input[key]);
        expect(read).not.toHaveProperty(key);
      }
      const problems =
        type === 'leadRunWorkflow'
          ? startedLeadRunInputProblems(input)
          : type === 'subagentWorkflow'
            ? subagentInputProblems(input)
            : batchInputProblems(input);
      expect(problems).toEqual([]);
    },
  );
});

describe('what changes with depth', () => {
  const scope: RunScope = lead().scope;
  const placement = { workspace_key: 'run-1@first' };

  it('a child gets the run’s scope, its workspace as its parent knows it, the run’s admission turn', () => {
    const child = childScope({ ...scope, fairness_key: undefined }, 'run-1', placement);
    expect(child).toEqual({
      ...scope,
      workspace_key: 'run-1@first',
      fairness_key: 'run-1',
      clarification: { timeout_seconds: scope.clarification!.timeout_seconds },
    });
    // Each agent counts its own questions.
    const asked = childScope(
      { ...scope, clarification: { timeout_seconds: 5, questions_asked: 3 } },
      'run-1',
      placement,
    );
    expect(asked.clarification).toEqual({ timeout_seconds: 5 });
    expect(childScope(scope, 'run-1', placement).fairness_key).toBe('team-a');
  });

  it('a setting added to the scope reaches a child and a batch item with no line of its own', () => {
    const wider = { ...scope, future_setting: { tokens: 10 } } as unknown as RunScope;
    expect(childScope(wider, 'run-1', placement)).toMatchObject({ future_setting: { tokens: 10 } });
    expect(batchItemScope(wider, 'run-1', placement)).toMatchObject({ future_setting: { tokens: 10 } });
  });

  it('a batch item runs with the run’s user, skills and guardrails, nobody to ask', () => {
    const withSkills: RunScope = {
      ...scope,
      skills: { root: '/srv/skills', container_path: '/mnt/skills', deferred_discovery: false },
      guardrails,
    };
    const item = batchItemScope(withSkills, 'run-1', placement);
    expect(item).toMatchObject({
      user_id: 'alice',
      skills: withSkills.skills,
      guardrails: { ...guardrails, no_approver: true },
      sandbox: scope.sandbox,
      loop_detection: scope.loop_detection,
      summarization: scope.summarization,
      fairness_key: 'team-a',
    });
    expect(item).not.toHaveProperty('clarification');
  });

  it('a batch the config builds carries the run scope a lead’s would', () => {
    const batch = buildBatchInput(fullConfig(), {
      description: 'Check',
      subagent_type: 'general-purpose',
      items: [{ key: 'a', prompt: 'A' }],
      workspace: '/srv/project',
      fairness_key: 'team-a',
    });
    const { clarification: _lead, ...leadScope } = scope;
    expect(batch.scope).toEqual(leadScope);
    expect(batchInputProblems(batch)).toEqual([]);
    expect(batchInputProblems({ ...batch, limits: { ...batch.limits, max_running_items: 9 } })).toEqual([
      expect.stringMatching(/^limits: .*max_running_items is above max_live_items/),
    ]);
  });
});
