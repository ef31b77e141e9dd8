/**
 * The pure parts of the ACP activity: the step log an agent's updates fold into, the permission answers a
 * guardrail policy gives, the `$NAME` references of a provider's env, and the provider's probe.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GuardrailPolicy } from '../../../contracts/guardrail-rules';
import type { AcpProviderSettings } from '../../../contracts/remote-subagent';
import { SUBAGENT_STEP_MAX_CHARS } from '../../../contracts/steps';
import { probeAcpProvider } from '../../../activities/remote/acp';
import { agentEnvironment } from '../../../activities/remote/acp/agent-env';
import {
  MODULE_POLICY_REASON,
  NO_POLICY_REASON,
  permissionDecider,
} from '../../../activities/remote/acp/permissions';
import type { Acp } from '../../../activities/remote/acp/sdk';
import { ACP_ANSWER_MAX_CHARS, ACP_STEPS_KEPT, AcpStepLog } from '../../../activities/remote/acp/step-log';
import { tempDir } from '../../support/subagent-input';

const chunk = (text: string, messageId?: string): Acp.SessionUpdate => ({
  sessionUpdate: 'agent_message_chunk',
  content: { type: 'text', text },
  ...(messageId !== undefined && { messageId }),
});

describe('AcpStepLog', () => {
  it('joins the chunks of one message, and starts a new one at a new message id', () => {
    const log = new AcpStepLog();
    for (const update of [chunk('Hel', 'm1'), chunk('lo', 'm1'), chunk('Again', 'm2'), chunk('!')])
      log.update(update);
    expect(log.messages()).toEqual([
      { role: 'assistant', content: 'Hello' },
      { role: 'assistant', content: 'Again!' },
    ]);
    expect(log.answer()).toBe('Hello\n\nAgain!');
  });

  it('attaches a tool call to the text before it and records its result once, when it is over', () => {
    const log = new AcpStepLog();
    log.update(chunk('Let me look.'));
    log.update({
      sessionUpdate: 'tool_call',
      toolCallId: 't1',
      title: 'List files',
      kind: 'search',
      rawInput: { dir: '.' },
    });
    log.update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'in_progress' });
    log.update({
      sessionUpdate: 'tool_call_update',
      toolCallId: 't1',
      status: 'failed',
      content: [{ type: 'diff', path: '/w/a.ts', newText: 'x' }],
    });
    log.update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed' });
    log.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } });
    log.update(chunk('Found it.'));
    expect(log.messages()).toEqual([
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 't1', name: 'List files', args: '{"dir":"."}' }],
      },
      { role: 'tool', tool_call_id: 't1', name: 'List files', content: '[edited /w/a.ts]', is_error: true },
      { role: 'assistant', content: 'Found it.' },
    ]);
    expect(log.answer()).toBe('Let me look.\n\nFound it.');
    expect(log.toolCallInfo('t1')).toEqual({ title: 'List files', kind: 'search', rawInput: { dir: '.' } });
  });

  it('keeps the last steps, each capped, and the end of a long answer, and says what it cut', () => {
    const log = new AcpStepLog();
    for (let i = 0; i < ACP_STEPS_KEPT + 5; i += 1) log.note(`step ${i}`);
    const messages = log.messages();
    expect(messages).toHaveLength(ACP_STEPS_KEPT + 1);
    expect(messages[0].content).toBe(
      `[acp] 5 earlier steps of the agent are not kept (the last ${ACP_STEPS_KEPT} are)`,
    );
    expect(messages[1].content).toBe('[acp] step 5');

    const long = new AcpStepLog();
    for (let i = 0; i < 30; i += 1) long.update(chunk('x'.repeat(5000)));
    long.update(chunk('THE END'));
    const [only] = long.messages();
    expect(only.content).toHaveLength(SUBAGENT_STEP_MAX_CHARS);
    expect(only.content.endsWith('…[truncated]')).toBe(true);
    expect(long.answer().startsWith("[…the start of the agent's answer was cut]\n")).toBe(true);
    expect(long.answer().endsWith('THE END')).toBe(true);
    expect(long.answer().length).toBeLessThan(ACP_ANSWER_MAX_CHARS + 100);
  });
});

describe('permissionDecider', () => {
  const asker = { provider: 'coder', delegation_id: 'lead/task/1' };
  const request = (
    options: Acp.PermissionOption[],
    toolCall: Partial<Acp.ToolCallUpdate> = {},
  ): Acp.RequestPermissionRequest => ({
    sessionId: 's',
    toolCall: { toolCallId: 'c1', ...toolCall },
    options,
  });
  const allOptions: Acp.PermissionOption[] = [
    { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
    { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'never', name: 'Never', kind: 'reject_always' },
    { optionId: 'no', name: 'No', kind: 'reject_once' },
  ];
  const policy = (more: Partial<GuardrailPolicy>): GuardrailPolicy => ({
    provider: 'rules',
    fail_closed: true,
    unattended: 'deny',
    ...more,
  });

  it('matches the call kind as the tool and the raw input, with the title, as the arguments', () => {
    const decide = permissionDecider(
      policy({
        rules: [
          { tool: 'edit', args: { path: '^src/', title: 'Edit' }, decision: 'allow' },
          { tool: '*', decision: 'deny', reason: 'only edits in src/' },
        ],
      }),
      asker,
    );
    const known = { title: 'Edit src/a.ts', kind: 'edit', rawInput: { path: 'src/a.ts' } };
    expect(decide(request(allOptions), known)).toEqual({
      outcome: { outcome: 'selected', optionId: 'once' },
      allowed: true,
      step: 'allowed edit "Edit src/a.ts": rule 0 matched (tool edit) [rules[0]]; answered "Allow once"',
    });
    // What the request itself says of the call counts over what the turn said before.
    expect(decide(request(allOptions, { rawInput: { path: 'docs/a.md' } }), known).allowed).toBe(false);
  });

  it('refuses with the narrowest reject option without a policy, under a module and on ask', () => {
    const cases: [GuardrailPolicy | undefined, string][] = [
      [undefined, NO_POLICY_REASON],
      [policy({ provider: 'module', module: '/x.js' }), MODULE_POLICY_REASON],
      [
        policy({ rules: [{ tool: '*', decision: 'ask', reason: 'a person decides' }] }),
        'a person decides; the policy asks',
      ],
    ];
    for (const [given, reason] of cases) {
      const answer = permissionDecider(given, asker)(request(allOptions), {
        kind: 'execute',
        title: 'rm -rf',
      });
      expect(answer.outcome).toEqual({ outcome: 'selected', optionId: 'no' });
      expect(answer.allowed).toBe(false);
      expect(answer.step).toContain(reason);
    }
  });

  it('cancels the request when the agent offers no option to refuse, and refuses an allow it offers no option for', () => {
    const allowOnly: Acp.PermissionOption[] = [{ optionId: 'ok', name: 'OK', kind: 'allow_once' }];
    const refused = permissionDecider(undefined, asker)(request(allowOnly), undefined);
    expect(refused).toMatchObject({ outcome: { outcome: 'cancelled' }, allowed: false });
    expect(refused.step).toMatch(/answered cancelled \(no option to refuse\)$/);

    const rejectOnly: Acp.PermissionOption[] = [{ optionId: 'no', name: 'No', kind: 'reject_once' }];
    const allowAll = permissionDecider(policy({ provider: 'allowlist' }), asker);
    const unoffered = allowAll(request(rejectOnly), { kind: 'read' });
    expect(unoffered).toMatchObject({ outcome: { outcome: 'selected', optionId: 'no' }, allowed: false });
    expect(unoffered.step).toContain('(the agent offered no option to allow it)');
  });
});

describe('provider env', () => {
  it('resolves $NAME and ${NAME}, keeps $$ as $, and names an unset variable without any value', () => {
    const env = { TOKEN: 't0k', HOME: '/home/u' };
    expect(agentEnvironment({ name: 'p', env: { K: 'Bearer $TOKEN at ${HOME}/x costs $$5' } }, env).K).toBe(
      'Bearer t0k at /home/u/x costs $5',
    );
    expect(() => agentEnvironment({ name: 'p', env: { K: 'a $TOKEN $MISSING' } }, env)).toThrow(
      "subagent_providers.p.env.K names $MISSING, which is not set in the worker's environment",
    );
    expect(agentEnvironment({ name: 'p', env: { A: '$TOKEN' } }, { TOKEN: 'v', PATH: '/bin' })).toEqual({
      TOKEN: 'v',
      PATH: '/bin',
      A: 'v',
    });
  });
});

describe('probeAcpProvider', () => {
  const settings = (command: string, env: Record<string, string> = {}): AcpProviderSettings => ({
    type: 'acp',
    name: 'p',
    command,
    args: [],
    env,
  });

  it('finds a command on the PATH the agent gets, or as an executable file', async () => {
    const dir = tempDir('acp-probe');
    const script = join(dir, 'my-agent');
    writeFileSync(script, '#!/bin/sh\n');
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '');
    chmodSync(script, 0o755);

    expect(await probeAcpProvider(settings('node'))).toEqual({ available: true });
    expect(await probeAcpProvider(settings(script))).toEqual({ available: true });
    expect(await probeAcpProvider(settings('my-agent', { PATH: dir }))).toEqual({ available: true });
    expect(await probeAcpProvider(settings('my-agent'))).toEqual({
      available: false,
      reason: 'its command my-agent is not found on the PATH',
    });
    expect(await probeAcpProvider(settings(plain))).toEqual({
      available: false,
      reason: `its command ${plain} is not an executable file`,
    });
    expect(await probeAcpProvider(settings(dir))).toMatchObject({ available: false });
    expect(await probeAcpProvider(settings('node', { PATH: '$ACP_PROBE_UNSET_PATH' }))).toEqual({
      available: false,
      reason:
        "subagent_providers.p.env.PATH names $ACP_PROBE_UNSET_PATH, which is not set in the worker's environment",
    });
  });
});
