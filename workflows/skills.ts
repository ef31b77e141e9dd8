/**
 * An agent's skills in its run (issue 30), wired from the pure rules of contracts/run-skills.ts: the snapshot
 * taken once by an activity and kept in loop state, the prompt block, `describe_skill`, the folders its tools
 * mount, and activation with its `allowed-tools` policy (and the secrets an active skill grants bash).
 */
import { log, patched } from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { ProjectActivities } from '../activities';
import type { McpToolFilter } from '../contracts/mcp';
import type { ToolCall, ToolMessage, ToolSpec } from '../contracts/messages';
import {
  activeSkillsReminder,
  DEFAULT_SKILL_FILE_READ_TOOL_NAMES,
  DESCRIBE_SKILL_TOOL_NAME,
  describeSkills,
  skillMcpFilter,
  skillToolPolicy,
  skillVisibleTools,
  type SkillToolPolicy,
  describeSkillToolSpec,
  screenCalls,
  skillsPromptBlock,
  slashSkill,
  type RunSkillsSettings,
  type ScreenedCall,
  type SnapshotSkill,
} from '../contracts/run-skills';
import type { SealedSecret } from '../contracts/secrets';
import { DEFAULT_USER_ID } from '../contracts/skills';
import { TOOL_SEARCH_TOOL_NAME } from '../contracts/tool-search';
import type { SkillMount } from '../contracts/tools';
import type { AgentLoopState, LoopPlugins } from './agent-loop';

/**
 * Issue 46: `tool_search` stays usable under a restricting skill, and `summarization.skill_file_read_tool_names`
 * names the tools whose read of a SKILL.md activates it. A run from before refused such a search and knew only
 * read_file; asked only for a response that calls `tool_search` or another read tool, so other runs keep their
 * history as it was.
 */
export const SKILL_POLICY_PATCH = 'skills-search-and-reads';

/** What the model is shown of an agent's tools this turn. */
export interface VisibleTools {
  builtin: string[];
  specs: ToolSpec[];
  mcp?: McpToolFilter;
}

// Reading a catalog is quick (its hashes read each package once) and harmless to repeat: a local activity, one
// marker in history.
const { loadRunSkills } = localActivities<ProjectActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** Who the skills are for: the agent's `skills:` list and its task (a `/name` prompt activates a skill). */
export interface AgentSkillsRequest {
  /** Absent: every enabled skill; `[]`: none. */
  list?: readonly string[];
  prompt: string;
}

/** The run's side of skills, handed to the agent loop. */
export class AgentSkills {
  constructor(
    private readonly state: AgentLoopState,
    private readonly settings: RunSkillsSettings,
    private readonly secrets: readonly SealedSecret[] | undefined,
  ) {}

  private get skills(): SnapshotSkill[] {
    return this.state.skills?.skills ?? [];
  }

  /** The system prompt's block (`<available_skills>`, or `<skill_index>`); none without skills. */
  promptBlock(): string | undefined {
    return skillsPromptBlock(this.skills, this.settings.deferred_discovery);
  }

  /** `describe_skill`, offered when the prompt lists names only. */
  toolSpecs(): ToolSpec[] {
    return this.settings.deferred_discovery && this.skills.length > 0 ? [describeSkillToolSpec()] : [];
  }

  /** `describe_skill` calls, answered from the snapshot in the workflow: no activity, a replay answers the same. */
  claimedCalls(): LoopPlugins['claimedCalls'] {
    if (this.toolSpecs().length === 0) return undefined;
    return {
      claims: (call: ToolCall) => call.name === DESCRIBE_SKILL_TOOL_NAME,
      run: (calls: ToolCall[]): Promise<ToolMessage[]> =>
        Promise.resolve(calls.map((call) => describeSkills(this.skills, call))),
    };
  }

  /** The skill folders every built-in tool call mounts read-only; absent for an agent without skills. */
  mounts(): SkillMount[] | undefined {
    const mounts = this.state.skills?.mounts ?? [];
    return this.skills.length > 0 && mounts.length > 0 ? mounts : undefined;
  }

  /** The tools whose read of a SKILL.md activates its skill (`summarization.skill_file_read_tool_names`). */
  private get readTools(): readonly string[] {
    return this.settings.skill_file_read_tool_names ?? DEFAULT_SKILL_FILE_READ_TOOL_NAMES;
  }

  /** The `allowed-tools` policy of the skills active now; undefined: no restriction. */
  policy(): SkillToolPolicy | undefined {
    return skillToolPolicy(this.state.active_skills ?? [], this.skills);
  }

  /**
   * What the model is shown while the active skills restrict it: the tools their `allowed-tools` list, and those
   * DeerFlow never hides (describe_skill, read_file, tool_search); everything without a restriction.
   */
  visible(tools: VisibleTools): VisibleTools {
    const policy = this.policy();
    if (policy === undefined) return tools;
    const specNames = skillVisibleTools(
      tools.specs.map((spec) => spec.name),
      policy,
    );
    return {
      builtin: skillVisibleTools(tools.builtin, policy),
      specs: tools.specs.filter((spec) => specNames.includes(spec.name)),
      ...(tools.mcp && { mcp: skillMcpFilter(tools.mcp, policy) }),
    };
  }

  /** The MCP tools a `tool_search` may find and promote now: the agent's, narrowed by the active policy. */
  searchFilter(filter: McpToolFilter): McpToolFilter {
    return skillMcpFilter(filter, this.policy());
  }

  /** After a compaction, the active skills to read again (their reads were summarized away). */
  reminder(): string | undefined {
    return activeSkillsReminder(this.state.active_skills ?? [], this.skills);
  }

  /** Whether this response is judged by issue 46's rules (SKILL_POLICY_PATCH); asked only when they could differ. */
  private newRules(calls: readonly ToolCall[]): boolean {
    const differs = calls.some(
      (call) =>
        call.name === TOOL_SEARCH_TOOL_NAME ||
        (call.name === 'read_file') !== this.readTools.includes(call.name),
    );
    return differs ? patched(SKILL_POLICY_PATCH) : true;
  }

  /**
   * A response's calls through the `allowed-tools` policy, in the model's order: refusals, the skills the
   * calls activate (kept in state), the secrets each bash call gets.
   */
  screen(calls: readonly ToolCall[]): ScreenedCall[] {
    const rules = this.newRules(calls)
      ? { readTools: this.readTools, toolSearchAllowed: true }
      : { readTools: ['read_file'] };
    const { screened, active } = screenCalls(
      calls,
      this.state.active_skills ?? [],
      this.skills,
      this.secrets,
      rules,
    );
    if (active.length > 0) this.state.active_skills = active;
    return screened;
  }
}

/**
 * The agent's skills: its snapshot taken now when its state has none (the run's first execution), else the
 * one carried in. A `/name` prompt activates that skill from the start.
 *
 * Gated by the input's `skills` field, not a `patched()` marker: only a starter that knows skills sets it, so
 * the history of every run from before (or of a run without a skills folder) has no such field and never
 * schedules this activity, while a run that has it always did; the input is part of history, so a replay
 * decides as the run did. A marker would cost every run an event for nothing.
 */
export async function agentSkills(
  state: AgentLoopState,
  settings: RunSkillsSettings,
  request: AgentSkillsRequest,
  run: { userId?: string; secrets?: readonly SealedSecret[] },
): Promise<AgentSkills> {
  if (state.skills === undefined) {
    const snapshot = await loadRunSkills({
      root: settings.root,
      container_path: settings.container_path,
      user_id: run.userId ?? DEFAULT_USER_ID,
      ...(request.list !== undefined && { skills: [...request.list] }),
      ...(settings.extensions_config !== undefined && { extensions_config: settings.extensions_config }),
    });
    state.skills = snapshot;
    // An operator sees what was left out (the workflow's logger is silent on replay).
    if (snapshot.problems.length > 0) {
      log.warn(`skills: ${snapshot.problems.length} problem(s) in the catalog`, {
        problems: snapshot.problems,
      });
    }
    const slash = slashSkill(request.prompt, snapshot.skills);
    if (slash !== undefined) state.active_skills = [{ name: slash, by: 'slash' }];
  }
  return new AgentSkills(state, settings, run.secrets);
}

/** The names of the agent's active skills, for its live details; absent: none. */
export function activeSkillNames(state: Pick<AgentLoopState, 'active_skills'>): string[] | undefined {
  const names = state.active_skills?.map((skill) => skill.name);
  return names && names.length > 0 ? names : undefined;
}

/** `{ active_skills }` for a status answer while some skill is active; else nothing (the shape older readers knew). */
export function withActiveSkills(state: Pick<AgentLoopState, 'active_skills'>): { active_skills?: string[] } {
  const names = activeSkillNames(state);
  return names ? { active_skills: names } : {};
}
