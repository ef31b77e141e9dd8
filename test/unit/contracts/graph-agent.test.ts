/** Graph agents in config: their reference, the keys they take and refuse, and max_turns → recursion limit. */
import { join } from 'node:path';
import { parseConfig } from '../../../contracts/config';
import { resolveAgent } from '../../../contracts/config/agents';
import { graphRecursionLimit, parseGraphReference } from '../../../contracts/graph';
import { loadConfig } from '../../../worker/config';
import { writeFileSync } from 'node:fs';
import { tempDir } from '../../support/subagent-input';
import { configProblems as problemsOf } from '../../support/config-problems';

const RESEARCHER = { description: 'Researches.', graph: '/graphs/researcher.js#build' };

describe('graph agents in config', () => {
  it('reads <module>#<export>, the export defaulting to graph', () => {
    expect(parseGraphReference('./agents/researcher.js#researcher')).toEqual({
      module: './agents/researcher.js',
      export: 'researcher',
    });
    expect(parseGraphReference('./agents/researcher.js')).toEqual({
      module: './agents/researcher.js',
      export: 'graph',
    });
    expect(parseGraphReference('#graph')).toBeUndefined();
    expect(parseGraphReference('./a.js#not an export')).toBeUndefined();
  });

  it('maps max_turns to the recursion limit the seeds give: turns × nodes per turn + one-time nodes', () => {
    expect(graphRecursionLimit(150, { nodes_per_turn: 2, one_time_nodes: 1 })).toBe(301);
    expect(graphRecursionLimit(3, { nodes_per_turn: 1, one_time_nodes: 0 })).toBe(3);
    expect(graphRecursionLimit(5, { nodes_per_turn: 4, one_time_nodes: 2 })).toBe(22);
  });

  it('resolves a graph agent: no tools of ours, the description as its prompt, the default mapping', () => {
    const { config } = parseConfig({ subagents: { custom_agents: { researcher: RESEARCHER } } });
    expect(resolveAgent(config, 'researcher')).toMatchObject({
      name: 'researcher',
      system_prompt: 'Researches.',
      tools: [],
      max_turns: 50,
      timeout_seconds: 900,
      graph: { module: '/graphs/researcher.js', export: 'build', nodes_per_turn: 2, one_time_nodes: 1 },
    });
    const tuned = parseConfig({
      subagents: {
        custom_agents: {
          researcher: { ...RESEARCHER, system_prompt: 'Be careful.', nodes_per_turn: 3, one_time_nodes: 0 },
        },
        agents: { researcher: { max_turns: 7 } },
      },
    }).config;
    expect(resolveAgent(tuned, 'researcher')).toMatchObject({
      system_prompt: 'Be careful.',
      max_turns: 7,
      graph: { nodes_per_turn: 3, one_time_nodes: 0 },
    });
  });

  it('takes the module path from the config file’s folder', () => {
    const dir = tempDir('graph-config');
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      'subagents:\n  custom_agents:\n    r:\n      description: R.\n      graph: ./agents/r.js\n',
    );
    const { config } = loadConfig(file);
    expect(resolveAgent(config, 'r').graph).toMatchObject({
      module: join(dir, 'agents', 'r.js'),
      export: 'graph',
    });
  });

  it('refuses tools on a graph agent, graph keys on another, and a malformed reference', () => {
    expect(
      problemsOf({
        subagents: {
          custom_agents: {
            g: { ...RESEARCHER, tools: { allow: ['bash'] } },
            h: { description: 'H.', graph: './h.js#not valid' },
            plain: { description: 'P.', system_prompt: 'P.', nodes_per_turn: 2 },
            nothing: { description: 'N.' },
          },
          agents: { g: { tools: { deny: ['bash'] } } },
        },
      }),
    ).toEqual([
      'subagents.custom_agents.nothing.system_prompt: is missing (text)',
      'subagents.custom_agents.g.tools: does not apply to a graph agent (its graph binds its own tools)',
      'subagents.agents.g.tools: does not apply to a graph agent (its graph binds its own tools)',
      'subagents.custom_agents.h.graph: "./h.js#not valid" is not <module path>#<export> (e.g. ./agents/researcher.js#graph)',
      'subagents.custom_agents.plain.nodes_per_turn: 2 applies to a graph agent only (set graph)',
    ]);
  });
});
