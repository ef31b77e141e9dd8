/**
 * Several plugins that run calls themselves (`task` and the batch tools: the delegator; `ask_clarification`:
 * the clarifications) as the one `claimedCalls` the agent loop takes: each call goes to the plugin that claims
 * it, the plugins run at once, and the results come back in the calls' order.
 */
import type { LoopPlugins } from './agent-loop';

type ClaimedCalls = NonNullable<LoopPlugins['claimedCalls']>;

export function combineClaimedCalls(...claimers: (ClaimedCalls | undefined)[]): ClaimedCalls | undefined {
  const present = claimers.filter((claimer): claimer is ClaimedCalls => claimer !== undefined);
  // One plugin (or none) runs exactly as before.
  if (present.length <= 1) return present[0];
  return {
    claims: (call) => present.some((claimer) => claimer.claims(call)),
    run: async (calls) => {
      const owners = calls.map((call) => present.findIndex((claimer) => claimer.claims(call)));
      const results = await Promise.all(
        present.map((claimer, index) => {
          const own = calls.filter((_, k) => owners[k] === index);
          return own.length > 0 ? claimer.run(own) : Promise.resolve([]);
        }),
      );
      const next = present.map(() => 0);
      return owners.map((owner) => results[owner][next[owner]++]);
    },
  };
}
