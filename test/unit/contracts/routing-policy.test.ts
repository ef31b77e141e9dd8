/**
 * The routing policy is stated in four texts (the lead prompt, the `task` tool description, the two built-in
 * role descriptions); rendered at the same enforced limits, they must say the same thing.
 */
import { parseConfig } from '../../../contracts/config';
import { listAgents } from '../../../contracts/config/agents';
import { ROUTING_VETOES, routingClauses } from '../../../contracts/routing-policy';
import { buildTaskToolSpec } from '../../../workflows/delegation/task-tool';
import { leadSystemPrompt } from '../../../workflows/lead-prompt';

const MAX_TOTAL_PER_RUN = 6;
const builtins = listAgents(parseConfig({}).config).filter(
  (agent) => agent.name === 'general-purpose' || agent.name === 'bash',
);

function texts(maxConcurrent: number) {
  const limits = { maxConcurrent, maxTotalPerRun: MAX_TOTAL_PER_RUN };
  const agents = builtins.map(({ name, description }) => ({ name, description }));
  return {
    lead: leadSystemPrompt(limits),
    task: buildTaskToolSpec({ provider: 'spawn', agents, ...limits }).description,
    roles: builtins.map((agent) => agent.description),
  };
}

/** Wording that belongs to parallel dispatch and multi-batch planning only. */
const PARALLEL = /parallel|at the same time|batch/i;

describe('the routing policy across the lead prompt, the task tool and the built-in roles', () => {
  it('has both built-in roles to check', () => {
    expect(builtins.map((agent) => agent.name)).toEqual(['general-purpose', 'bash']);
  });

  it.each([1, 3, 4])(
    'states the same clauses in the lead prompt and the task tool at max_concurrent %i',
    (n) => {
      const { lead, task } = texts(n);
      const clauses = routingClauses({ maxConcurrent: n, maxTotalPerRun: MAX_TOTAL_PER_RUN }).flat();
      for (const clause of clauses) {
        expect({ clause: clause.name, inLead: lead.includes(clause.text) }).toEqual({
          clause: clause.name,
          inLead: true,
        });
        expect({ clause: clause.name, inTask: task.includes(clause.text) }).toEqual({
          clause: clause.name,
          inTask: true,
        });
      }
      const names = clauses.map((clause) => clause.name);
      for (const always of [
        'direct_default',
        'benefit',
        'costs',
        'vetoes',
        'sequential_chain',
        'fewest',
        'limits',
      ]) {
        expect(names).toContain(always);
      }
    },
  );

  it.each([1, 3, 4])('states the enforced limits, and only them, at max_concurrent %i', (n) => {
    for (const text of [texts(n).lead, texts(n).task]) {
      expect([...text.matchAll(/at most (\d+) task calls? per response/g)].map((m) => Number(m[1]))).toEqual([
        n,
      ]);
      expect([...text.matchAll(/at most (\d+) delegations? in this run/g)].map((m) => Number(m[1]))).toEqual([
        MAX_TOTAL_PER_RUN,
      ]);
      const parallelCount = [...text.matchAll(/Up to (\d+) task calls in one response/g)].map((m) =>
        Number(m[1]),
      );
      expect(parallelCount).toEqual(n > 1 ? [n] : []);
    }
  });

  it('drops parallel and multi-batch guidance from both texts when one call per response is enforced', () => {
    const { lead, task } = texts(1);
    expect(lead).not.toMatch(PARALLEL);
    expect(task).not.toMatch(PARALLEL);
    for (const text of [lead, task]) {
      expect(text).toContain(
        'only for a material benefit of a specialist capability or of context isolation',
      );
    }
  });

  it.each([3, 4])('gives both texts parallel and later-batch guidance at max_concurrent %i', (n) => {
    for (const text of [texts(n).lead, texts(n).task]) {
      expect(text).toContain('parallel latency');
      expect(text).toContain('independent and do not overlap');
      expect(text).toContain('Re-evaluate before each later batch');
      expect(text).toContain('keep the parallel benefit within a batch');
    }
  });

  it.each([1, 3, 4])(
    'keeps the default, the vetoes and the costs in every text at max_concurrent %i',
    (n) => {
      const { lead, task, roles } = texts(n);
      for (const text of [lead, task]) {
        expect(text).toContain('Do the work yourself by default');
        expect(text).toContain('Hard vetoes:');
        expect(text).toContain('they are costs, not vetoes');
        expect(text).toContain('A bounded chain of dependent steps may go to one subagent');
        expect(text).toContain('Use the fewest subagents');
      }
      for (const text of [lead, task, ...roles]) {
        expect(text).toContain(ROUTING_VETOES.outputDependency);
        expect(text).toContain(ROUTING_VETOES.sharedState);
      }
    },
  );

  it('says in each built-in role when not to use it, in words that hold at any limit', () => {
    const [generalPurpose, bash] = builtins.map((agent) => agent.description);
    expect(generalPurpose).toContain('Not for a quick lookup or a small edit you can do directly');
    expect(bash).toContain('Not for a single short command you can run yourself');
    for (const role of [generalPurpose, bash]) {
      expect(role).toContain('a cheap direct path costs less than a subagent');
      expect(role).not.toMatch(PARALLEL);
    }
  });

  it('renders the lead prompt deterministically from the limits alone', () => {
    expect(leadSystemPrompt({ maxConcurrent: 3, maxTotalPerRun: 6 })).toBe(
      leadSystemPrompt({ maxConcurrent: 3, maxTotalPerRun: 6 }),
    );
    expect(leadSystemPrompt({ maxConcurrent: 3, maxTotalPerRun: 6 })).toMatch(/^You are the lead agent\. /);
  });

  it('leaves the policy out of the lead prompt of a run with no agent to start (no task tool)', () => {
    const prompt = leadSystemPrompt(undefined);
    expect(prompt).toMatch(/^You are the lead agent\. /);
    expect(prompt).not.toMatch(/task|subagent|delegat/i);
  });
});
