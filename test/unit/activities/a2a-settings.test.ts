/**
 * The small rules of an A2A delegation that need no agent: secrets read from the environment (and never shown),
 * where the agent card is looked for, the message ids a re-send is recognised by, and which heartbeat details
 * a later attempt trusts.
 */
import { agentCardUrls } from '../../../activities/remote/a2a/connection';
import { A2ACardError } from '../../../activities/remote/a2a/errors';
import {
  answerMessageId,
  derivedMessageId,
  previousProgress,
  promptMessageId,
} from '../../../activities/remote/a2a/identity';
import { redactSecrets, RemoteSettingsError, resolveEnvReferences } from '../../../activities/remote/shared';
import type { RemoteSubagentInput } from '../../../contracts/remote-subagent';

describe('environment references in header and env values', () => {
  const env = { TEAM_TOKEN: 'tok-123456', HOST: 'agents.internal', EMPTY: '' };

  it('resolves $NAME and ${NAME} anywhere in a value; $$ is a dollar; other dollars stay', () => {
    const { values, secrets } = resolveEnvReferences(
      {
        Authorization: 'Bearer $TEAM_TOKEN',
        'X-Host': 'https://${HOST}/v1',
        'X-Price': '$$5 and $5',
        'X-Empty': '[$EMPTY]',
      },
      env,
      'subagent_providers.team.headers',
    );
    expect(values).toEqual({
      Authorization: 'Bearer tok-123456',
      'X-Host': 'https://agents.internal/v1',
      'X-Price': '$5 and $5',
      'X-Empty': '[]',
    });
    expect(secrets.sort()).toEqual(['agents.internal', 'tok-123456']);
  });

  it('names the missing variable and where it is used, never a value', () => {
    const resolve = () =>
      resolveEnvReferences(
        { Authorization: 'Bearer $TEAM_TOKEN $MISSING' },
        env,
        'subagent_providers.team.headers',
      );
    expect(resolve).toThrow(RemoteSettingsError);
    expect(resolve).toThrow(
      "subagent_providers.team.headers.Authorization names $MISSING, which is not set in the worker's environment",
    );
    let message = '';
    try {
      resolve();
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toContain('tok-123456');
  });

  it('redacts every secret from a message, the longest first; too short a value is left alone', () => {
    expect(redactSecrets('got tok-123456 and tok-1234567', ['tok-123456', 'tok-1234567'])).toBe(
      'got [redacted] and [redacted]',
    );
    expect(redactSecrets('port 1 of 1', ['1'])).toBe('port 1 of 1');
  });
});

describe('where the agent card is looked for', () => {
  it.each([
    ['http://agent:9999', ['http://agent:9999/.well-known/agent-card.json']],
    ['http://agent:9999/', ['http://agent:9999/.well-known/agent-card.json']],
    [
      'https://host/agents/team',
      ['https://host/agents/team/.well-known/agent-card.json', 'https://host/.well-known/agent-card.json'],
    ],
    ['https://host/cards/team.json', ['https://host/cards/team.json']],
    ['https://host/.well-known/agent-card.json', ['https://host/.well-known/agent-card.json']],
  ])('%s → %j', (url, urls) => {
    expect(agentCardUrls(url)).toEqual(urls);
  });

  it('refuses what is not an http(s) URL', () => {
    expect(() => agentCardUrls('agent:9999')).toThrow(A2ACardError);
    expect(() => agentCardUrls('not a url')).toThrow('"not a url" is not an http(s) URL');
  });
});

describe('message ids', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('are UUID-shaped, the same for the same parts, another for others', () => {
    expect(derivedMessageId('a', 'b')).toMatch(UUID);
    expect(derivedMessageId('a', 'b')).toBe(derivedMessageId('a', 'b'));
    expect(derivedMessageId('a', 'b')).not.toBe(derivedMessageId('ab'));
  });

  it("the prompt's follows the delegation alone; an answer's also its activity and words", () => {
    expect(promptMessageId('lead/task/call_1')).toBe(promptMessageId('lead/task/call_1'));
    expect(promptMessageId('lead/task/call_1')).not.toBe(promptMessageId('lead/task/call_2'));
    const input = {
      delegation_id: 'lead/task/call_1',
      answer: { remote_task_id: 't1', text: 'main' },
    } as RemoteSubagentInput;
    const activity = (activityId: string) =>
      ({ info: { activityId, workflowExecution: { workflowId: 'w', runId: 'r1' } } }) as never;
    expect(answerMessageId(input, activity('5'))).toBe(answerMessageId(input, activity('5')));
    expect(answerMessageId(input, activity('5'))).not.toBe(answerMessageId(input, activity('9')));
    expect(answerMessageId(input, activity('5'))).not.toBe(promptMessageId('lead/task/call_1'));
  });
});

describe("an earlier attempt's heartbeat", () => {
  it('is trusted field by field, and only when it is this activity’s progress', () => {
    expect(
      previousProgress({ prompt_sent: true, updates: 4, remote_task_id: 't1', context_id: 'c1' }),
    ).toEqual({
      prompt_sent: true,
      updates: 4,
      remote_task_id: 't1',
      context_id: 'c1',
    });
    expect(previousProgress({ prompt_sent: false, updates: 'many', remote_task_id: 7 })).toEqual({
      prompt_sent: false,
      updates: 0,
    });
    for (const details of [undefined, null, 'text', { updates: 3 }, { head: 'checkpoint' }]) {
      expect(previousProgress(details)).toBeUndefined();
    }
  });
});
