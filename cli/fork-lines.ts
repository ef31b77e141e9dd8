/**
 * What `status` says of forks (docs/fork.md): where a fork came from, and the forks a run has, so that each
 * links to the other; and how `fork` prints a subagent's fork once it has ended.
 */
import type { ForkLink } from '../client/fork';
import type { TokenUsage } from '../contracts/messages';
import type { ForkOrigin } from '../contracts/run-fork';
import type { SubagentResult } from '../contracts/subagent';
import { outcomeLine } from './outcome-lines';

function reusedText(usage: TokenUsage | undefined): string {
  return usage ? `, ${usage.total_tokens} tokens shown as reused, not billed again` : '';
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/**
 * `forked from <run> at lead turn N (reused: …)` for a fork; nothing for a run from its first turn. A subagent's
 * fork counts its turns as `turn`.
 */
export function forkedFromLines(origin: ForkOrigin | undefined, turnName = 'lead turn'): string[] {
  if (!origin) return [];
  const delegations = origin.reused_delegations > 0 || turnName === 'lead turn';
  return [
    `forked from ${origin.from_run_id} at ${turnName} ${origin.turn} ` +
      `(reused: ${plural(origin.turn, turnName)}` +
      `${delegations ? `, ${plural(origin.reused_delegations, 'delegation')}` : ''}` +
      `${reusedText(origin.reused_usage)})`,
  ];
}

/** A subagent's fork as `fork` prints it once it has ended: how it ended, where it came from, its answer. */
export function forkedSubagentLines(result: SubagentResult & { run_id: string }): string[] {
  const tokens = result.token_usage ? [`tokens: ${result.token_usage.total_tokens} (its own calls)`] : [];
  const answer = result.result ?? result.result_brief;
  return [
    outcomeLine(result.run_id, result),
    ...forkedFromLines(result.forked_from, 'turn'),
    ...tokens,
    ...(answer !== undefined && answer !== '' ? ['', answer] : []),
  ];
}

/** `forks: <run> (turn N), …` for a run that has some. */
export function forkListLines(forks: readonly ForkLink[]): string[] {
  if (forks.length === 0) return [];
  const each = forks.map((fork) =>
    fork.turn === undefined ? fork.run_id : `${fork.run_id} (turn ${fork.turn})`,
  );
  return [`forks: ${each.join(', ')}`];
}
