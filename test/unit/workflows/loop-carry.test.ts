import { initialLoopState, loopCarry, restoreLoopState } from '../../../workflows/agent-loop';

describe('the loop state across continue-as-new', () => {
  const transcript = { tail: [{ role: 'user' as const, content: 'Do it.' }] };

  it('starts a task run with nothing promoted', () => {
    expect(initialLoopState(transcript, 0)).not.toHaveProperty('promoted_tools');
  });

  it("carries tool_search's promotions to the next execution", () => {
    const state = { ...initialLoopState(transcript, 0), promoted_tools: ['github__create_issue'] };
    const carry = loopCarry(state, 1);
    expect(carry.promoted_tools).toEqual(['github__create_issue']);
    expect(restoreLoopState(JSON.parse(JSON.stringify(carry)) as typeof carry).promoted_tools).toEqual([
      'github__create_issue',
    ]);
  });

  it('carries the skills snapshot and the active skills to the next execution', () => {
    const skills = {
      skills: [
        {
          name: 'a',
          description: 'The a skill.',
          category: 'public' as const,
          container_path: '/mnt/skills/public/a/SKILL.md',
          content_hash: 'sha256:a',
          required_secrets: [],
        },
      ],
      mounts: [{ container_path: '/mnt/skills/public', host_path: '/srv/skills/public' }],
      problems: [],
    };
    const active = [{ name: 'a', by: 'slash' as const }];
    const carry = loopCarry({ ...initialLoopState(transcript, 0), skills, active_skills: active }, 1);
    const restored = restoreLoopState(JSON.parse(JSON.stringify(carry)) as typeof carry);
    expect(restored.skills).toEqual(skills);
    expect(restored.active_skills).toEqual(active);
  });
});
