/** A graph agent's module path, taken from the config file's folder (so a config works from any directory). */
import { resolve } from 'node:path';
import { parseGraphReference } from '../../contracts/graph';

/** `custom_agents` with each `graph:` module path made absolute against `base` (the config file's folder). */
export function withAbsoluteGraphs<A extends { graph?: string }>(
  agents: Record<string, A>,
  base: string,
): Record<string, A> {
  return Object.fromEntries(
    Object.entries(agents).map(([name, agent]) => {
      const reference = agent.graph === undefined ? undefined : parseGraphReference(agent.graph);
      if (reference === undefined) return [name, agent];
      return [name, { ...agent, graph: `${resolve(base, reference.module)}#${reference.export}` }];
    }),
  );
}
