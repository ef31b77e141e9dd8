import { createRemoteActivities, type RemoteProtocol } from '../../../activities/remote';
import type { RemoteProviderSettings, RemoteSubagentInput } from '../../../contracts/remote-subagent';

const acp: RemoteProviderSettings = { type: 'acp', name: 'local_acp', command: 'node', args: [], env: {} };
const a2a: RemoteProviderSettings = { type: 'a2a', name: 'team_a2a', url: 'http://127.0.0.1:9' };
const slow: RemoteProviderSettings = { type: 'a2a', name: 'slow_a2a', url: 'http://127.0.0.1:8' };

function protocol(probe: RemoteProtocol['probe'], run?: RemoteProtocol['run']): RemoteProtocol {
  return { probe, run: run ?? (() => Promise.reject(new Error('not run here'))) };
}

describe('probeSubagentProviders', () => {
  it('answers for every provider, in parallel, within the probe timeout', async () => {
    const started: string[] = [];
    const activities = createRemoteActivities({
      probeTimeoutMs: 200,
      protocols: {
        acp: protocol(async () => {
          started.push('acp');
          return { available: true };
        }),
        a2a: protocol((provider) => {
          started.push(provider.name);
          // The slow one never answers; the other refuses.
          return provider.name === 'slow_a2a'
            ? new Promise(() => undefined)
            : Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:9'));
        }),
      },
    });
    const at = Date.now();
    const probe = await activities.probeSubagentProviders({ providers: [acp, a2a, slow] });
    expect(Date.now() - at).toBeLessThan(5_000);
    expect(started.sort()).toEqual(['acp', 'slow_a2a', 'team_a2a']);
    expect(probe).toEqual({
      local_acp: { available: true },
      team_a2a: { available: false, reason: 'connect ECONNREFUSED 127.0.0.1:9' },
      slow_a2a: { available: false, reason: 'no answer within 0.2 s' },
    });
  });
});

describe('runRemoteSubagent', () => {
  it('goes to the protocol of the provider’s type', async () => {
    const seen: string[] = [];
    const activities = createRemoteActivities({
      protocols: {
        acp: protocol(
          () => Promise.resolve({ available: true }),
          async (input) => {
            seen.push(`acp:${input.delegation_id}`);
            return { end: 'completed', text: 'ok', messages: [] };
          },
        ),
      },
    });
    const input: RemoteSubagentInput = {
      provider: acp,
      delegation_id: 'run/task/a',
      prompt: 'Do it.',
      workspace: '/srv/ws',
      deadline_ms: Date.now() + 60_000,
    };
    await expect(activities.runRemoteSubagent(input)).resolves.toEqual({
      end: 'completed',
      text: 'ok',
      messages: [],
    });
    expect(seen).toEqual(['acp:run/task/a']);
  });
});
