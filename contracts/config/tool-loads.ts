/**
 * The tool loads of a run (`subagent_tools:`), resolved from the config into what the lead's input carries:
 * each load's provider with its settings, and the agent its child runs as. Pure: no Node APIs.
 */
import { SUBAGENT_PROVIDERS, type SubagentProvider } from '../lead';
import type { ResolvedAgent } from '../subagent';
import type { SubagentProviderRef, SubagentToolLoad } from '../subagent-providers';
import type { Config } from './index';
import { filterTools, resolveAgent, resolveModel, withMcp } from './agents';
import { resolveMcpFilter } from './mcp';
import type { SubagentToolConfig } from './providers';

/**
 * The agent a load's child runs as: `general-purpose` with its overrides, named after the tool, with the load's
 * persona as its system prompt, its model and its tool filter. A remote load's agent has no tools of ours (its
 * wall clock and budgets still bound the delegation).
 */
function loadAgent(config: Config, load: SubagentToolConfig, provider: SubagentProviderRef): ResolvedAgent {
  const base = resolveAgent(config, 'general-purpose');
  const local = (SUBAGENT_PROVIDERS as readonly string[]).includes(provider.type);
  const { mcp: _mcp, ...withoutMcp } = base;
  const agent: ResolvedAgent = {
    ...withoutMcp,
    name: load.tool_name,
    description: load.description ?? base.description,
    system_prompt: load.persona ?? base.system_prompt,
    tools: local ? filterTools(load.tool_filter?.allow ?? base.tools, load.tool_filter?.deny ?? []) : [],
  };
  if (!local) return agent;
  const model = load.agent_options?.model;
  return {
    ...agent,
    ...(model !== undefined && { model: resolveModel(config, model) }),
    ...withMcp(
      resolveMcpFilter(config.mcp_servers, load.tool_filter?.allow, load.tool_filter?.deny, true),
      config,
    ),
  };
}

function providerRef(config: Config, name: string): SubagentProviderRef {
  if ((SUBAGENT_PROVIDERS as readonly string[]).includes(name)) {
    return { type: name as SubagentProvider, name };
  }
  // Checked when the config was parsed: every load names a provider that exists.
  return { ...config.subagent_providers[name], name };
}

/** The loads besides `task`, in the order the config lists them; none when subagents are off. */
export function resolveToolLoads(config: Config): SubagentToolLoad[] {
  if (!config.subagents.enabled) return [];
  return config.subagent_tools.map((load) => {
    const provider = providerRef(config, load.provider);
    return {
      tool_name: load.tool_name,
      provider,
      ...(load.description !== undefined && { description: load.description }),
      ...(load.persona !== undefined && { persona: load.persona }),
      ...(load.agent_options?.model !== undefined && { model: load.agent_options.model }),
      ...(load.max_depth !== undefined && { max_depth: load.max_depth }),
      agent: loadAgent(config, load, provider),
    };
  });
}
