/**
 * The benefit-based routing policy (DeerFlow's): when the lead should delegate, said once. Four texts are built
 * from these clauses and must agree: the lead's system prompt, the `task` tool's description, and the
 * descriptions of the two built-in roles. The clauses follow the enforced limits: with one `task` call per
 * response, parallel and multi-batch guidance is left out and delegation pays only for a specialist
 * capability or context isolation.
 */

/** The delegation limits as the run enforces them; the texts state these numbers, never a default. */
export interface RoutingLimits {
  /** `task` calls one response may contain. */
  maxConcurrent: number;
  /** Delegations the run may make in total. */
  maxTotalPerRun: number;
}

export type RoutingClauseName =
  | 'direct_default'
  | 'benefit'
  | 'costs'
  | 'vetoes'
  | 'sequential_chain'
  | 'fewest'
  | 'parallel_scopes'
  | 'later_batches'
  | 'limits';

export interface RoutingClause {
  name: RoutingClauseName;
  text: string;
}

/**
 * The two hard vetoes, worded so they hold at any limit: work in flight includes the lead's own tool calls,
 * which run beside a `task` call of the same response even when one call per response is allowed.
 */
export const ROUTING_VETOES = {
  outputDependency: 'needs the output of work still in flight',
  sharedState: 'changes files or other state that work in flight also changes',
} as const;

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Whether the limits leave any parallel benefit to weigh. */
export function allowsParallelDispatch(limits: RoutingLimits): boolean {
  return limits.maxConcurrent > 1;
}

/** The policy's clauses for these limits, grouped as the texts state them: weighing, dispatch, limits. */
export function routingClauses(limits: RoutingLimits): RoutingClause[][] {
  const parallel = allowsParallelDispatch(limits);
  const weighing: RoutingClause[] = [
    {
      name: 'direct_default',
      text:
        'Do the work yourself by default: delegation is an optimisation, not the default answer to a ' +
        'complex request.',
    },
    {
      name: 'benefit',
      text: parallel
        ? 'Use the `task` tool only when its benefit (parallel latency: independent parts done at the same ' +
          'time; a specialist capability; or context isolation: a large working context kept out of yours) ' +
          'clearly exceeds its costs.'
        : 'Use the `task` tool only for a material benefit of a specialist capability or of context ' +
          'isolation (a large working context kept out of yours) that clearly exceeds its costs.',
    },
    {
      name: 'costs',
      text:
        "The costs: the subagent's startup, the discovery it repeats, synthesising its result into yours, " +
        'conflicts over shared state, and its side effects. Repeated discovery and a cheap direct path ' +
        'weigh against delegating; they are costs, not vetoes.',
    },
  ];
  const dispatch: RoutingClause[] = [
    {
      name: 'vetoes',
      text:
        `Hard vetoes: never delegate a part that ${ROUTING_VETOES.outputDependency}, or that ` +
        `${ROUTING_VETOES.sharedState} (work in flight: another subagent, or a tool call of yours in the ` +
        'same response); wait for that work to finish first.',
    },
    {
      name: 'sequential_chain',
      text:
        'A bounded chain of dependent steps may go to one subagent as one task when its specialist ' +
        'capability or context isolation clearly wins.',
    },
    { name: 'fewest', text: 'Use the fewest subagents that do the job.' },
  ];
  if (parallel) {
    dispatch.push(
      {
        name: 'parallel_scopes',
        text:
          `Up to ${limits.maxConcurrent} task calls in one response run at the same time: split work ` +
          "that way only into scopes that are independent and do not overlap (no part needs another's " +
          'output, no two change the same files or state).',
      },
      {
        name: 'later_batches',
        text:
          'Re-evaluate before each later batch of task calls whether delegating still pays, and keep the ' +
          'parallel benefit within a batch: send its independent calls in one response, not one a response.',
      },
    );
  }
  const hardLimits: RoutingClause[] = [
    {
      name: 'limits',
      text:
        `HARD LIMITS: at most ${plural(limits.maxConcurrent, 'task call', 'task calls')} per response ` +
        '(extra calls are dropped without running); at most ' +
        `${plural(limits.maxTotalPerRun, 'delegation', 'delegations')} in this run (after that, task ` +
        'calls are refused: finish with the results you have).',
    },
  ];
  return [weighing, dispatch, hardLimits];
}

/** The policy as paragraphs (weighing, dispatch, limits), the same in the lead prompt and the `task` tool. */
export function routingParagraphs(limits: RoutingLimits): string[] {
  return routingClauses(limits).map((group) => group.map((clause) => clause.text).join(' '));
}

/**
 * When a built-in role is the wrong choice: its own cheap direct path (`cheapDirectPath`, e.g. "a single
 * short command you can run yourself"), then the two vetoes. Worded to hold at any limit.
 */
export function roleNotFor(cheapDirectPath: string): string {
  return (
    `Not for ${cheapDirectPath} (a cheap direct path costs less than a subagent), nor for a part that ` +
    `${ROUTING_VETOES.outputDependency} or ${ROUTING_VETOES.sharedState}.`
  );
}
