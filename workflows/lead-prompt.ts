/**
 * The lead's system prompt, rendered once when a run starts. Its routing policy is the one the `task` tool
 * states (`contracts/routing-policy.ts`) at the limits this run enforces, so the two can never disagree.
 */
import { routingParagraphs, type RoutingLimits } from '../contracts/routing-policy';

/** The lead's first system message for a run with these enforced delegation limits. */
export function leadSystemPrompt(limits: RoutingLimits): string {
  const [weighing, dispatch, hardLimits] = routingParagraphs(limits);
  return [
    `You are the lead agent. ${weighing}`,
    dispatch,
    hardLimits,
    'Give each subagent a self-contained task, then combine their results into one answer for the user. Work ' +
      'happens in the shared workspace; answer with a concise final result.',
  ].join('\n\n');
}
