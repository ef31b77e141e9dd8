/**
 * The workflow inputs' wire shapes, each defined once, as a schema: a lead run's (`LeadRunInput`), a
 * subagent's (`SubagentInput`) and the settings they carry (model, budgets, guards, sandbox, delegation
 * limits). The TypeScript types are inferred from the schemas; the files of each concept re-export theirs
 * (contracts/model.ts `ModelSettings`, contracts/lead.ts `LeadRunInput`, …).
 *
 * Builders, not schemas: the worker shares this module between its workflows deep-frozen (worker/worker.ts,
 * PRELOADED_MODULES) and zod cannot use a frozen schema, and most workflows never check an input, so
 * contracts/inputs.ts builds them on first use and keeps them. Pure: no Node APIs.
 */
import { z } from 'zod';
import { listOf, mappingOf, oneOf, valueTypes, wholeNumber } from './config/value-types';
import type { BatchCarry } from './batch';
import type { BatchItem } from './batch-items';
import type { LeadCarry, LeadFork } from './lead';
import { MAX_CONCURRENT_CEILING, MAX_TOTAL_PER_RUN_CEILING, SUBAGENT_PROVIDERS } from './lead';
import type { LedgerEntry } from './ledger';
import type { LoopCarry } from './loop-carry';
import type { ChatMessage } from './messages';
import { MODEL_PROVIDERS, REASONING_EFFORTS, THINKING_TYPES } from './model';
import { secretNameProblem } from './secrets';
import { skillNameProblem } from './skills';
import { GUARDRAIL_DECISIONS } from './guardrails';
import {
  GUARDRAIL_PROVIDER_KINDS,
  rulePatternProblem,
  toolGlobProblem,
  UNATTENDED_MODES,
} from './guardrail-rules';
import { SANDBOX_KINDS } from './tools';
import { loadToolNameProblem, type ProviderProbe } from './subagent-providers';
import { systemFolderProblem } from './workspace-folders';
import { workspacePlacementSchema } from './workspace';
import { scopedInput, TOP_LEVEL_SCOPE_KEYS } from './scoped-input';
import { modelPricingSchema, treeBudgetSchema } from './budget';
import { runMemorySchema } from './memory-settings';
import { dailyBudgetSchema } from './daily-budget';
import { toolOutputSchema } from './tool-output';

type ValueTypes = ReturnType<typeof valueTypes>;

interface RawIssue {
  readonly input?: unknown;
}

/** Keys it does not know pass (older and newer shapes); a missing or non-mapping value is named. */
function object<S extends z.ZodRawShape>(shape: S, noun = 'a mapping') {
  return z.object(shape, {
    error: (issue: RawIssue) => (issue.input === undefined ? `is missing (${noun})` : `is not ${noun}`),
  });
}

/**
 * A shape the workflow writes itself (a carry, a carried ledger), checked in part only: its type is its
 * interface, which stays its one definition, and the schema checks what a starter could get wrong.
 */
const checkedInPart = <T>(schema: z.ZodType): z.ZodType<T> => schema as z.ZodType<T>;

/**
 * Typed, not checked: keys the input check never looked at, so an input of any run recorded before keeps
 * passing as it did (a check that refuses what was accepted needs its own `patched()` gate).
 */
const unchecked = <T>() => z.custom<T>();

/** Request-scoped secrets, sealed (contracts/secrets.ts): names readable, values never. */
function sealedSecrets({ text }: Pick<ValueTypes, 'text'>) {
  return listOf(
    object({
      name: text.refine((name) => secretNameProblem(name) === undefined, {
        error: 'is not a secret name (an environment variable name)',
      }),
      key_id: text,
      sealed: text,
    }),
    'sealed secrets',
  );
}

/**
 * A run's skills (contracts/run-skills.ts): where the packages are, where agents see them, how the prompt
 * lists them, and each agent's `skills:` list. Present only when the run has a skills folder: a run without
 * one takes no snapshot (no activity).
 */
function runSkillsSchema({ bool, text }: Pick<ValueTypes, 'bool' | 'text'>) {
  // Refinements, not `.regex`: a workflow's schemas are deep-frozen, and a regex check writes `lastIndex`.
  const absolute = text.refine((path) => path.startsWith('/'), { error: 'is not an absolute path' });
  const names = listOf(
    z.string().refine((name) => skillNameProblem(name) === undefined, { error: 'is not a skill name' }),
    'skill names',
  );
  return object({
    /** The skills folder on the workers' machines (`skills.path`, resolved against the config's folder). */
    root: absolute,
    /** Where agents see it, read-only (`skills.container_path`). */
    container_path: absolute,
    /** Names only in the prompt (`<skill_index>`), details through `describe_skill`. */
    deferred_discovery: bool,
    /** DeerFlow's extensions_config.json, whose `skills` switch skills off by name; absent: all enabled. */
    extensions_config: absolute.optional(),
    /** The lead's `skills:` list: absent = every enabled skill, `[]` = none. */
    lead: names.optional(),
    /** `summarization.skill_file_read_tool_names`; absent: DeerFlow's default (contracts/run-skills.ts). */
    skill_file_read_tool_names: listOf(z.string(), 'tool names').optional(),
    /** Each agent's `skills:` list, by agent name; an agent not named gets every enabled skill. */
    agents: mappingOf(names, 'skill lists by agent').optional(),
  });
}

/**
 * A run's guardrails (contracts/guardrail-rules.ts): the run's policy, each agent's, how long an `ask` waits.
 * Present only when the config puts a policy in force: a run without one evaluates nothing (no activity, no
 * state). Refinements, not `.regex`, for the same reason as above.
 */
function runGuardrailsSchema({ bool, seconds, text }: Pick<ValueTypes, 'bool' | 'seconds' | 'text'>) {
  const glob = z.string().refine((value) => toolGlobProblem(value) === undefined, {
    error: 'is not a tool name or glob',
  });
  const pattern = z.string().refine((value) => rulePatternProblem(value) === undefined, {
    error: 'is not a pattern RE2 takes (or is too long)',
  });
  const policy = object({
    provider: oneOf(GUARDRAIL_PROVIDER_KINDS),
    allowed_tools: listOf(glob, 'tool globs').optional(),
    denied_tools: listOf(glob, 'tool globs').optional(),
    rules: listOf(
      object({
        tool: glob,
        args: mappingOf(pattern, 'argument patterns').optional(),
        decision: oneOf(GUARDRAIL_DECISIONS),
        reason: text.optional(),
        id: text.optional(),
      }),
      'rules',
    ).optional(),
    module: text.refine((path) => path.startsWith('/'), { error: 'is not an absolute path' }).optional(),
    export: text.optional(),
    fail_closed: bool,
    unattended: oneOf(UNATTENDED_MODES),
  });
  return object({
    approval_timeout_seconds: seconds,
    run: policy.optional(),
    agents: mappingOf(policy, 'policies by agent').optional(),
    no_approver: z.literal(true).optional(),
  });
}

/** An absolute path that is not a system folder. */
function workspacePath({ text }: ValueTypes) {
  return text
    .refine((path) => path.startsWith('/'), {
      error: 'is not an absolute path (the workspace must be absolute, e.g. /home/me/project)',
    })
    .superRefine((path, ctx) => {
      if (!path.startsWith('/')) return;
      const message = systemFolderProblem(path);
      if (message !== undefined) ctx.addIssue({ code: 'custom', input: path, message });
    });
}

/**
 * How one model call goes, as a config's `models[]` entry says it and a workflow input carries it: the same
 * keys with the same checks.
 */
export function modelCallFields({
  seconds,
  temperature,
  text,
}: Pick<ValueTypes, 'seconds' | 'temperature' | 'text'>) {
  return {
    temperature: temperature.optional(),
    max_tokens: wholeNumber(1).optional(),
    request_timeout_seconds: seconds.optional(),
    /**
     * The largest answer (content and tool calls, UTF-8 bytes) one model call may return; absent →
     * DEFAULT_MAX_ANSWER_BYTES. A stream is read no further past it, and the run ends `failed`: not retried.
     */
    max_answer_bytes: wholeNumber(1).optional(),
    /** scripted: path of a YAML/JSON script file (see activities/model/scripted.ts). */
    script_file: text.optional(),
    /**
     * anthropic, bedrock, google, ollama: extended thinking, as Anthropic writes it (`{type: enabled,
     * budget_tokens: 4096}`, `{type: adaptive}`, `{type: disabled}`).
     */
    thinking: z
      .strictObject(
        { type: oneOf(THINKING_TYPES), budget_tokens: wholeNumber(1).optional() },
        {
          error: (issue: RawIssue) =>
            issue.input === undefined ? 'is missing (a mapping)' : 'is not a mapping (type, budget_tokens)',
        },
      )
      .optional(),
    /** openai, azure_openai: a reasoning model's effort. */
    reasoning_effort: oneOf(REASONING_EFFORTS).optional(),
    /** bedrock: the AWS region; absent → AWS_REGION or AWS_DEFAULT_REGION on the worker. */
    region: text.optional(),
    /** bedrock: a profile of the AWS shared credentials files, read from disk (DeerFlow's `credentials_profile_name`). */
    aws_profile: text.optional(),
    /** azure_openai: the deployment's name; absent → `model`. */
    azure_deployment: text.optional(),
    /** azure_openai: the `api-version` query parameter; absent → OPENAI_API_VERSION on the worker. */
    api_version: text.optional(),
  };
}

/** A model as the activity needs it: resolved from the config's `models:` list (or a CLI flag). */
function modelSchemas(types: ValueTypes) {
  const { httpUrl, seconds, text } = types;
  /**
   * The retry policy of the model activity for transient provider errors (HTTP 408, 409, 429, 5xx, network,
   * `request_timeout_seconds`). Errors retrying cannot fix (400, 401, 404…) never retry.
   */
  const retry = object({
    /** Wait before the first retry. */
    initial_interval_seconds: seconds,
    /** Each wait is the previous one times this (≥ 1). */
    backoff_coefficient: z.number().min(1, { error: 'is out of range (≥ 1)' }),
    /** The longest wait between two attempts; also caps what a provider's `Retry-After` may ask for. */
    max_interval_seconds: seconds,
    /** Attempts in all, the first included; absent → no cap (the agent's wall-clock budget ends the wait). */
    max_attempts: wholeNumber(1).optional(),
    /**
     * Give up this many seconds after the first attempt was scheduled (the activity's schedule-to-close
     * timeout); the run then fails with the provider's last message. Absent → no limit of its own.
     */
    max_retry_seconds: seconds.optional(),
  });
  const settings = object({
    /** The name the config gives it (`models[].name`); reported as `model_name` when the provider names none. */
    name: text,
    provider: oneOf(MODEL_PROVIDERS),
    /** The provider's model id (`gpt-4o-mini`, `claude-sonnet-4-5`, `gemini-2.5-flash`, …). */
    model: text,
    /**
     * The provider's endpoint, when not its public one: an OpenAI-compatible server (else OPENAI_BASE_URL), a
     * proxy of the Anthropic or Gemini API, the Azure resource (`azure_endpoint`), a Bedrock endpoint, Ollama's.
     */
    base_url: httpUrl.optional(),
    /**
     * Name of the environment variable that holds the key (default: the provider's own, DEFAULT_API_KEY_ENVS):
     * keys never travel in history.
     */
    api_key_env: text.optional(),
    ...modelCallFields(types),
    /** How transient provider errors are retried; absent → DEFAULT_MODEL_RETRY. */
    retry: retry.optional(),
    /** USD per million tokens (contracts/budget.ts): what its calls cost the tree budget; absent → nothing. */
    pricing: modelPricingSchema().optional(),
    /**
     * Finish reasons that mean the provider stopped the answer for safety (config `safety_finish_reason`): its
     * tool calls never run. Absent → DEFAULT_SAFETY_FINISH_REASONS; `[]`: the check is off.
     */
    safety_finish_reasons: listOf(text, 'finish reasons').optional(),
  });
  return { retry, settings };
}

/** The guards' settings: the token budget and loop detection. */
function guardSchemas({ bool, fraction, positiveNumber }: ValueTypes) {
  const tokenBudget = object({
    enabled: bool,
    max_tokens: wholeNumber(1),
    /** Fraction of max_tokens at which a one-time budget note is added to the next model call. */
    warn_threshold: fraction,
    /** Fraction of max_tokens at which the turn's tool calls are stripped and the run finishes (1.0). */
    hard_threshold: positiveNumber,
  });
  const toolFrequencyOverride = object({ warn: wholeNumber(1), hard_limit: wholeNumber(1) });
  const loopDetection = object({
    enabled: bool,
    /** Identical tool-call sets within the window before a warning is added. */
    warn_threshold: wholeNumber(1),
    /** Identical tool-call sets within the window before the run is stopped. */
    hard_limit: wholeNumber(1),
    window_size: wholeNumber(1),
    /** Calls of one tool name (any arguments) before a warning, and before the stop. */
    tool_freq_warn: wholeNumber(1),
    tool_freq_hard_limit: wholeNumber(1),
    tool_freq_overrides: mappingOf(toolFrequencyOverride, 'per-tool thresholds'),
  });
  return { tokenBudget, toolFrequencyOverride, loopDetection };
}

/** Where and how an agent's tools run: its sandbox, and which MCP tools it may use. */
function toolSchemas({ bool, seconds, toolName }: ValueTypes) {
  const sandbox = object({
    /** Run bash on the host (inside the workspace) when no sandbox can start. Off by default, as in the seeds. */
    allow_host_bash: bool,
    /**
     * The sandbox to use; absent means `auto`. Optional because histories recorded before this key existed
     * carry sandbox settings without it.
     */
    kind: oneOf(SANDBOX_KINDS).optional(),
    /** Wall-clock limit of one bash command. */
    bash_timeout_seconds: seconds,
    /** Characters of combined output kept from one command (the rest is cut, and the cut is said). */
    output_cap_chars: wholeNumber(1),
    /**
     * Resource limits of one command (see SandboxLimits). Optional, with defaults applied where they are
     * read, because histories recorded before these keys existed carry sandbox settings without them.
     */
    max_processes: unchecked<number>().optional(),
    max_memory_mb: unchecked<number>().optional(),
    max_total_memory_mb: unchecked<number>().optional(),
    max_file_size_mb: unchecked<number>().optional(),
    max_cpu_seconds: unchecked<number>().optional(),
  });
  /**
   * Which MCP tools an agent may see and run (contracts/mcp.ts): data, so it travels in workflow inputs, and
   * what a run's activities apply, so it is checked.
   */
  const mcpFilter = object({
    allow: listOf(toolName, 'tool names'),
    deny: listOf(toolName, 'tool names'),
    /**
     * `tool_search.enabled`: the tools go to the model by name only until `tool_search` promotes them
     * (contracts/tool-search.ts). Absent on runs started before it existed, which replay as they ran.
     */
    deferred: z.literal(true).optional(),
    /** `tool_search.auto_promote_top_k` (1..5): matching routed schemas promoted before a model call. */
    auto_promote_top_k: z.number().int().min(1).max(5).optional(),
  });
  return { sandbox, mcpFilter };
}

/** An agent with every default applied (what a subagent workflow runs with), and the settings it needs. */
function agentSchemas(types: ValueTypes) {
  const { seconds, text, toolName } = types;
  const model = modelSchemas(types);
  const guards = guardSchemas(types);
  const tools = toolSchemas(types);
  /** A graph agent as a subagent runs it (contracts/graph.ts). */
  const graph = object({
    /** The module's path: absolute once the config is loaded from a file. */
    module: text,
    /** The export: a compiled graph, or a factory `(context) => compiled graph`. */
    export: text,
    nodes_per_turn: wholeNumber(1),
    one_time_nodes: wholeNumber(0),
  });
  const agent = object({
    name: text,
    description: text,
    system_prompt: text,
    /** Tools the agent may see and run, after allow/deny (never `task` for a subagent unless nesting is on). */
    tools: listOf(toolName, 'tool names'),
    max_turns: wholeNumber(1),
    timeout_seconds: seconds,
    token_budget: guards.tokenBudget,
    model: model.settings,
    /** The MCP tools it may see and run (its allow/deny entries that name them); absent: none. */
    mcp: tools.mcpFilter.optional(),
    /** Set for an agent that is a LangGraph graph: the subagent runs it instead of the agent loop. */
    graph: graph.optional(),
  });
  return { model, guards, tools, graph, agent };
}

/**
 * The provider registry (contracts/subagent-providers.ts): a provider as a load and a remote child carry it
 * (header and env values are `$NAME` references or plain text, never read here), and a load itself.
 */
function providerSchemas(types: ValueTypes, agents: AgentSchemas) {
  const { httpUrl, text } = types;
  const anyText = z.string({ error: 'is not text' });
  const a2a = object({
    type: z.literal('a2a'),
    name: text,
    url: httpUrl,
    headers: mappingOf(anyText, 'HTTP headers').optional(),
  });
  const acp = object({
    type: z.literal('acp'),
    name: text,
    command: text,
    args: listOf(anyText, 'arguments'),
    env: mappingOf(anyText, 'environment variables'),
  });
  const providerError = (issue: RawIssue) =>
    issue.input === undefined
      ? 'is missing (a provider: spawn, fork, a2a or acp, with its settings)'
      : 'is not a provider (spawn or fork with a name; a2a with url; acp with command, args and env)';
  const remote = z.discriminatedUnion('type', [a2a, acp], { error: providerError });
  const provider = z.discriminatedUnion(
    'type',
    [object({ type: oneOf(SUBAGENT_PROVIDERS), name: text }), a2a, acp],
    {
      error: providerError,
    },
  );
  const toolName = z
    .string({
      error: (issue: RawIssue) => (issue.input === undefined ? 'is missing (a tool name)' : 'is not text'),
    })
    .superRefine((name, ctx) => {
      const problem = loadToolNameProblem(name);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', input: name, message: problem });
    });
  /** One model-facing tool bound to one provider (a `subagent_tools` entry, resolved by the config). */
  const load = object({
    tool_name: toolName,
    provider,
    /** The load's own words for the model, after the provider's wording. */
    description: text.optional(),
    /** Shadows the child's system prompt (local); sent before the prompt (remote). */
    persona: text.optional(),
    /** `agent_options.model` as written: a local child runs `agent.model`; a remote agent is passed this. */
    model: text.optional(),
    /** Deepest delegation this tool may start (absent: the run's `max_depth`). */
    max_depth: wholeNumber(0).optional(),
    /** The child's agent: named after the tool, the load's persona, model and tool filter applied. */
    agent: agents.agent,
  });
  const loads = listOf(load, 'subagent tool loads').superRefine((list, ctx) => {
    list.forEach((entry, index) => {
      if (list.findIndex((other) => other.tool_name === entry.tool_name) !== index) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'tool_name'],
          input: entry.tool_name,
          message: 'is listed twice (each load needs a tool name of its own)',
        });
      }
    });
  });
  /** A remote child's load: what `runRemoteSubagent` is given besides the task. */
  const remoteChild = object({
    provider: remote,
    tool_name: text,
    persona: text.optional(),
    model: text.optional(),
  });
  return { provider, remote, load, loads, remoteChild };
}

/** What a run carries besides its agents: compaction, questions, a stored transcript. */
function runSchemas({ seconds, text }: ValueTypes, model: ReturnType<typeof modelSchemas>) {
  /** Summarization as a run uses it (absent when `summarization.enabled` is false). */
  const summarization = object({
    /** Estimated prompt tokens at which the transcript is compacted before the next model call. */
    trigger_tokens: wholeNumber(1),
    /** Most recent messages kept as they are (a tool result is never kept without its call). */
    keep_messages: wholeNumber(1),
    summary_prompt: text.optional(),
    /** The model that writes summaries; absent → the agent's own. */
    model: model.settings.optional(),
  });
  /** A run's clarification settings (config `clarification:`), carried in the workflow inputs. */
  const clarification = object({
    /** How long one question waits for its answer; then the model is told none came. */
    timeout_seconds: seconds,
    /** Questions this agent asked in earlier executions (continue-as-new), so ids go on from there. */
    questions_asked: wholeNumber(0).optional(),
  });
  /** A stored transcript prefix: the key of its last segment, and how much it holds. */
  const transcriptRef = object({
    /** sha256 (hex) of the segment's bytes in the payload store. */
    key: text,
    /** Messages in the prefix. */
    count: wholeNumber(0),
    /** Characters of message content in the prefix (a cheap size estimate: tokens ≈ chars / 4). */
    chars: wholeNumber(0),
  });
  const mapping = mappingOf(z.unknown(), 'values');
  /** Written by the workflow itself when it continues as new: its shape only (older carries differ). */
  const carry = object({
    turns: wholeNumber(0).optional(),
    continued: wholeNumber(0).optional(),
    guard_states: mapping.optional(),
    transcript: mapping.optional(),
  });
  return {
    summarization,
    clarification,
    transcriptRef,
    forkMessages: checkedInPart<ChatMessage[]>(listOf(mapping, 'messages')),
    leadCarry: checkedInPart<LeadCarry>(carry),
    loopCarry: checkedInPart<LoopCarry>(carry),
  };
}

/** How much a run may delegate: its limits, its batches, and its ledger so far. */
function delegationSchemas({ seconds }: ValueTypes) {
  // The config's ranges, with its messages: an API caller is held to what a config file is. A workflow
  // takes a larger per-response limit from a run started before the ceiling (it continues as new with it).
  const limitsUpTo = (maxConcurrent: number | undefined) =>
    object({
      /**
       * `task` calls one response may contain, 1–4 (`MAX_CONCURRENT_CEILING`); config keeps it at or below
       * `subagent_runtime.max_running`.
       */
      max_concurrent: wholeNumber(1, maxConcurrent),
      /** Delegations one run may make in total (1–50). */
      max_total_per_run: wholeNumber(1, MAX_TOTAL_PER_RUN_CEILING),
      /** Deepest delegation allowed: a child's depth is its parent's plus one; 0 allows none. */
      max_depth: wholeNumber(0),
      provider: oneOf(SUBAGENT_PROVIDERS),
      /**
       * The run's `subagent_runtime.queue_timeout_seconds`: a child's hard backstop covers a wait that long
       * for a slot on top of its own timeout (absent: the default, 300).
       */
      queue_timeout_seconds: seconds.optional(),
    });
  const batchLimits = object({
    /** Items whose subagent executes at once (each holds an admission slot). */
    max_running_items: wholeNumber(1),
    /** Items started or waiting for a slot (running ≤ live). */
    max_live_items: wholeNumber(1),
    /** Attempts an item may spend (a run that failed, or failed its criteria); admission refusals spend none. */
    max_attempts: wholeNumber(1),
    /** Before attempt n+1: this many seconds × 2^(n−1); also the wait before asking again after a refusal. */
    retry_backoff_seconds: seconds,
  });
  /** What a lead run may do with batches (present in its input only when the config enables them). */
  const batchTool = object({
    /** The ceiling for a batch the lead starts: the model may ask for less, never more. */
    limits: batchLimits,
    max_items: wholeNumber(1),
  });
  const ledgerEntry = object({ id: z.string(), run_id: z.string() });
  return {
    limitsUpTo,
    limits: limitsUpTo(MAX_CONCURRENT_CEILING),
    batchLimits,
    batchTool,
    ledger: checkedInPart<LedgerEntry[]>(listOf(ledgerEntry, 'ledger entries')),
  };
}

type AgentSchemas = ReturnType<typeof agentSchemas>;
type RunSchemas = ReturnType<typeof runSchemas>;
type DelegationSchemas = ReturnType<typeof delegationSchemas>;
type ProviderSchemas = ReturnType<typeof providerSchemas>;

/**
 * What a whole run shares, on the wire as one object (`scope`), carried unchanged from the lead to each child
 * and batch item (contracts/run-scope.ts `childScope` says what changes with depth). A run-wide setting is one
 * line here and the code that reads it: nothing between the lead and its deepest child copies it.
 */
function runScopeSchema(types: ValueTypes, agents: AgentSchemas, run: RunSchemas) {
  const { text } = types;
  return object(
    {
      /** Whose run it is (contracts/user.ts). Absent: `default`. */
      user_id: types.userId.optional(),
      /** The caller's request-scoped secrets, sealed (contracts/secrets.ts). Absent: none. */
      secrets: sealedSecrets(types).optional(),
      /** The run's skills (contracts/run-skills.ts); each agent's own list is in it. Absent: none. */
      skills: runSkillsSchema(types).optional(),
      /** The run's guardrails (contracts/guardrail-rules.ts); each agent applies its own policy. Absent: none. */
      guardrails: runGuardrailsSchema(types).optional(),
      workspace: workspacePath(types),
      /** Where the workspace lives (contracts/workspace.ts), as the agent that started this one knew it. */
      workspace_placement: workspacePlacementSchema().optional(),
      /** Whose workspace records the run's calls use (workflows/workspace-route.ts); absent: its own. */
      workspace_key: text.optional(),
      sandbox: agents.tools.sandbox,
      loop_detection: agents.guards.loopDetection,
      /** Compaction for every agent of the run; absent → off. */
      summarization: run.summarization.optional(),
      /**
       * `ask_clarification`, when the config enables it: the lead is offered it, and each subagent whose tools
       * allow it. Absent (off, or a run from before it existed): no new tool.
       */
      clarification: run.clarification.optional(),
      /**
       * Admission slots rotate between fairness keys: runs that share one (a tenant) share one turn. Absent: the
       * lead run's id, which its children are given.
       */
      fairness_key: text.optional(),
      /**
       * The run's tree budget (contracts/budget.ts), over the lead and everything it starts: the lead keeps the
       * ledger, every other agent leases its share from it. Absent → none.
       */
      tree_budget: treeBudgetSchema().optional(),
      /** The user's memory, for the lead (contracts/memory.ts); absent → none. */
      memory: runMemorySchema().optional(),
      /** Its user's daily budget (contracts/daily-budget.ts): the lead asks the user's ledger. Absent → none. */
      daily_budget: dailyBudgetSchema().optional(),
      /** Large tool results saved in the workspace, the model given a synopsis (contracts/tool-output.ts). */
      tool_output: toolOutputSchema().optional(),
      /** `write_file` / `str_replace` refused on an existing file this agent has not read (contracts/tool-output.ts). */
      read_before_write: z.literal(true).optional(),
    },
    'a run scope',
  );
}

/**
 * A run-wide setting beside a `scope` would be ignored: it is refused, naming where it goes. (An input from
 * before the scope has no `scope`, and its settings are read into one: it never meets this.)
 */
function misplacedScopeKeys() {
  const misplaced = (key: string) =>
    z.undefined({ error: `is a run-wide setting: it goes in scope (scope.${key})` }).optional();
  return Object.fromEntries(TOP_LEVEL_SCOPE_KEYS.map((key) => [key, misplaced(key)])) as Record<
    (typeof TOP_LEVEL_SCOPE_KEYS)[number],
    ReturnType<typeof misplaced>
  >;
}

/**
 * The wire shape from before the scope, converted where a schema meets an input (contracts/scoped-input.ts), so
 * a recorded input and a new one are checked, and read, as one shape.
 */
const scoped = <S extends z.ZodType>(schema: S) => z.preprocess(scopedInput, schema);

/** A lead run's fields: what the client API accepts, its per-response limit aside. */
function leadRunFields(
  types: ValueTypes,
  agents: AgentSchemas,
  run: RunSchemas,
  delegation: DelegationSchemas,
  providers: ProviderSchemas,
) {
  const { seconds, text, toolName } = types;
  const scope = runScopeSchema(types, agents, run);
  return {
    /** The user's request. */
    prompt: text,
    /** Defaults to the workflow id (DESIGN §1: one execution per run, workflow id = run id). */
    run_id: text.optional(),
    /** What the whole run shares: every delegation carries it. */
    scope,
    model: agents.model.settings,
    /** Built-in tools the lead runs itself; `task` is added when delegation is possible. */
    tools: listOf(toolName, 'tool names'),
    /** The MCP tools the lead may see and run (every one the config's servers offer); absent: none. */
    mcp: agents.tools.mcpFilter.optional(),
    /** The agents `task` may start, every override applied, in the order the tool lists them. */
    agents: listOf(agents.agent, 'agents'),
    /** The lead's own token budget; each child carries its agent's. */
    token_budget: agents.guards.tokenBudget,
    /** The lead's own turn budget. */
    max_turns: wholeNumber(1),
    /** The lead's own wall clock (graceful: the run ends `timed_out` with its partial answer); absent → none. */
    timeout_seconds: seconds.optional(),
    limits: delegation.limits,
    /**
     * The tools besides `task` that delegate, one per load (`subagent_tools:`), each bound to a provider.
     * Absent (none configured, or a run from before the registry): `task` alone.
     */
    subagent_tools: providers.loads.optional(),
    /**
     * Durable batches: present when the config enables them (`subagents.batch.enabled`), then the lead is
     * offered `batch_task` and the tools that follow a batch. The limits are the ceiling for its batches.
     */
    batch: delegation.batchTool.optional(),
    /** 0 for a top-level lead; a lead started by a delegating child has the child's depth. */
    depth: wholeNumber(0),
    /**
     * Entries carried in: from a continue-as-new of this run (same run_id), or from an earlier run of the same
     * conversation (another run_id: shown to the model, not counted toward this run's total).
     */
    ledger: delegation.ledger.optional(),
    /** Set by the run itself when it continues as new: where the previous execution left off. */
    carry: run.leadCarry.optional(),
    /** ISO 8601: when the run got its slot (`lead_runtime`); set when it continues as new, so it keeps it. */
    admitted_at: text.optional(),
    /**
     * Set by every starter of this project: the run asks for its slot as its first step. Absent (an input
     * from before it existed), the run's own history says whether it does (the `lead-admission` patch, which
     * costs a marker and a search attribute update in every run that checks it).
     */
    asks_slot: z.literal(true).optional(),
    /**
     * Set by every starter of this project: waits whose deadline can be overtaken leave their timer to fire
     * rather than cancel it (workflows/timed-wait.ts). Absent (an input from before it existed), the run
     * waits as its history did.
     */
    uncancelled_timers: z.literal(true).optional(),
    /**
     * Set by every starter of this project: the workflow's Temporal status says how it ended
     * (contracts/closing.ts). Absent (an input from before it existed), its own history says whether it does
     * (the `honest-close` patch, which costs a marker in every workflow that checks it).
     */
    honest_close: z.literal(true).optional(),
    /**
     * A fork's starting point (docs/fork.md): the original run's transcript at the end of the lead turn kept,
     * read from its history by the fork's first execution. Absent: a run from its first turn.
     */
    fork: checkedInPart<LeadFork>(object({ from_run_id: text, turn: wholeNumber(0) })).optional(),
  };
}

function subagentInputSchema(
  types: ValueTypes,
  agents: AgentSchemas,
  run: RunSchemas,
  delegation: DelegationSchemas,
  providers: ProviderSchemas,
) {
  const { text } = types;
  return object(
    {
      /** The lead run's id (its workflow id). */
      run_id: text,
      /** The tool_call_id of the `task` call that started this subagent. */
      task_id: text,
      description: text,
      prompt: text,
      subagent_type: text,
      agent: agents.agent,
      /** Its lead's scope, as `childScope` hands it down. */
      scope: runScopeSchema(types, agents, run),
      ...misplacedScopeKeys(),
      /** Delegation depth: a child's depth is its parent's plus one (the lead is 0). */
      depth: wholeNumber(0),
      /** `fork` provider: the lead's completed turns the child starts from (those after `fork_from`). */
      fork_messages: run.forkMessages.optional(),
      /** `fork` provider: the lead's stored transcript prefix, whose completed turns come first. */
      fork_from: run.transcriptRef.optional(),
      /**
       * Present when the agent may delegate in turn (its tools include `task`): what it may start, and the
       * limits.
       */
      delegation: object({
        agents: listOf(agents.agent, 'agents'),
        limits: delegation.limits,
        /** This subagent's own delegations so far (set when it continues as new). */
        ledger: delegation.ledger.optional(),
        /** The run's tool loads (the lead's `subagent_tools`): it may delegate through them as the lead does. */
        loads: providers.loads.optional(),
        /** What the run's probe of the loads' remote providers found: the child probes nothing. */
        provider_probe: checkedInPart<ProviderProbe>(
          z.record(z.string(), z.object({ available: z.boolean() })),
        ).optional(),
      }).optional(),
      /**
       * Present when a remote provider does the work (an `a2a` or `acp` load): the subagent runs the
       * `runRemoteSubagent` activity instead of its agent loop.
       */
      remote: providers.remoteChild.optional(),
      /**
       * Its first progress report to the parent waits until it has run this long (at a turn's end): a child
       * done sooner reports only its result. Absent (children started before this existed): after its first
       * turn.
       */
      first_report_after_ms: wholeNumber(0).optional(),
      /**
       * Its first progress report waits until this moment (ISO 8601, set by the parent from its own clock): a
       * child done sooner reports only its result. Replaces `first_report_after_ms`, which counted from the
       * run's first activation on whichever worker ran it: a worker that picked the child up mid-run counted
       * from its own first activation, and a replay from another, so the two could disagree on a report.
       */
      first_report_at: text.optional(),
      /**
       * Set when it continues as new holding its slot: when its wall clock started (the server's start, or the
       * grant when it waited in the queue).
       */
      admitted_at: text.optional(),
      /**
       * Set by the parent: the subagent asks for its slot as its first step. Absent (an input from before it
       * existed), its own history says whether it does (the `subagent-admission` patch, which costs a marker
       * and a search attribute update in every child that checks it).
       */
      asks_slot: z.literal(true).optional(),
      /**
       * Set by every starter of this project: waits whose deadline can be overtaken leave their timer to fire
       * rather than cancel it (workflows/timed-wait.ts). Absent (an input from before it existed), the run
       * waits as its history did.
       */
      uncancelled_timers: z.literal(true).optional(),
      /**
       * Set by every starter of this project: the workflow's Temporal status says how it ended
       * (contracts/closing.ts). Absent (an input from before it existed), its own history says whether it does
       * (the `honest-close` patch, which costs a marker in every workflow that checks it).
       */
      honest_close: z.literal(true).optional(),
      /**
       * Set by a batch for its item: the item's acceptance criteria (contracts/batch-items.ts), checked by the
       * subagent itself against its answer and workspace; one not met fails it, naming the criteria.
       */
      acceptance_criteria: listOf(text, 'acceptance criteria').optional(),
      /** Set by the subagent itself when it continues as new: where the previous execution left off. */
      carry: run.loopCarry.optional(),
      /**
       * A fork of a subagent (docs/fork.md): the original subagent's transcript at the end of the turn kept, read
       * from its history by the fork's first execution; the fork is a run of its own (`run_id` its own id).
       * Absent: a subagent from its first turn.
       */
      fork: checkedInPart<LeadFork>(object({ from_run_id: text, turn: wholeNumber(0) })).optional(),
    },
    'a subagent input',
  );
}

/**
 * A durable batch's input (contracts/batch.ts): its agent, its items, how it runs them, and its run's scope,
 * which each item's subagent carries. The items are checked by contracts/batch-items.ts (one line a problem,
 * RE2 deciding the patterns), by the client and by the workflow, not here.
 */
function batchInputSchema(types: ValueTypes, agents: AgentSchemas, run: RunSchemas) {
  const { text } = types;
  const { batchLimits } = delegationSchemas(types);
  const carry = object({
    records: listOf(mappingOf(z.unknown(), 'values'), 'item records'),
    counters: mappingOf(z.unknown(), 'counters'),
    continued: wholeNumber(0),
    started_at: text,
  });
  return object(
    {
      /** The lead run it belongs to (absent: the batch's own id, for a batch a client started). */
      run_id: text.optional(),
      description: text,
      subagent_type: text,
      agent: agents.agent,
      items: unchecked<BatchItem[]>(),
      limits: batchLimits.refine((limits) => limits.max_running_items <= limits.max_live_items, {
        error: 'max_running_items is above max_live_items: running items are live items',
      }),
      /** The run's scope: each item's subagent carries it (`batchItemScope`). */
      scope: runScopeSchema(types, agents, run),
      ...misplacedScopeKeys(),
      /** Depth of its items' subagents (the lead's children: 1). */
      depth: wholeNumber(1),
      /** Continue as new past this many events (default BATCH_HISTORY_EVENTS; lower in tests). */
      history_events: wholeNumber(1).optional(),
      /** Set by the batch itself when it continues as new. */
      carry: checkedInPart<BatchCarry>(carry).optional(),
      /**
       * Set by every starter of this project: the workflow's Temporal status says how it ended
       * (contracts/closing.ts). Absent (an input from before it existed), its own history says whether it does
       * (the `honest-close` patch, which costs a marker in every workflow that checks it).
       */
      honest_close: z.literal(true).optional(),
    },
    'a batch input',
  );
}

/** Every input schema, built anew (contracts/inputs.ts builds them once, on first use). */
export function buildInputSchemas() {
  const types = valueTypes();
  const agents = agentSchemas(types);
  const run = runSchemas(types, agents.model);
  const delegation = delegationSchemas(types);
  const providers = providerSchemas(types, agents);
  const leadRun = leadRunFields(types, agents, run, delegation, providers);
  const checked = { ...leadRun, ...misplacedScopeKeys() };
  return {
    /** What the client API accepts. */
    leadRun: scoped(object(checked, 'a lead run input')),
    /** The same as a new client writes it (its settings in `scope`, nowhere else): the input's JSON Schema. */
    documentedLeadRun: object(leadRun, 'a lead run input'),
    /** What a lead run accepts at its start: its own continued executions included. */
    startedLeadRun: scoped(
      object({ ...checked, limits: delegation.limitsUpTo(undefined) }, 'a lead run input'),
    ),
    subagent: scoped(subagentInputSchema(types, agents, run, delegation, providers)),
    batch: scoped(batchInputSchema(types, agents, run)),
  };
}

type InputSchemas = ReturnType<typeof buildInputSchemas>;

/** How the model activity retries transient provider errors; absent → DEFAULT_MODEL_RETRY. */
export type ModelRetrySettings = z.output<AgentSchemas['model']['retry']>;
/** A model as the activity needs it: resolved from the config's `models:` list (or a CLI flag). */
export type ModelSettings = z.output<AgentSchemas['model']['settings']>;
export type TokenBudgetSettings = z.output<AgentSchemas['guards']['tokenBudget']>;
export type ToolFrequencyOverride = z.output<AgentSchemas['guards']['toolFrequencyOverride']>;
export type LoopDetectionSettings = z.output<AgentSchemas['guards']['loopDetection']>;
/** Where and how `bash` runs, and the limits of one command. */
export type SandboxSettings = z.output<AgentSchemas['tools']['sandbox']>;
/** Which MCP tools an agent may see and run (contracts/mcp.ts). */
export type McpToolFilter = z.output<AgentSchemas['tools']['mcpFilter']>;
/** A graph agent as a subagent runs it (part of `ResolvedAgent`, contracts/graph.ts). */
export type GraphAgentSettings = z.output<AgentSchemas['graph']>;
/** An agent with every default applied: what a subagent workflow runs with. */
export type ResolvedAgent = z.output<AgentSchemas['agent']>;
/** Summarization as a run uses it (absent when `summarization.enabled` is false). */
export type SummarizationRuntime = z.output<RunSchemas['summarization']>;
/** A run's clarification settings (config `clarification:`), carried in the workflow inputs. */
export type ClarificationSettings = z.output<RunSchemas['clarification']>;
/** A stored transcript prefix: the key of its last segment, and how much it holds. */
export type TranscriptRef = z.output<RunSchemas['transcriptRef']>;
/** The delegation limits of one lead run, as config resolves them. */
export type DelegationLimitSettings = z.output<DelegationSchemas['limits']>;
/** How a batch runs its items: at once, in flight, attempts and the wait between them. */
export type BatchLimits = z.output<DelegationSchemas['batchLimits']>;
/** What a lead run may do with batches (present in its input only when the config enables them). */
export type BatchToolSettings = z.output<DelegationSchemas['batchTool']>;
/** A run's guardrails as its inputs carry them (the interface in contracts/guardrail-rules.ts is the same shape). */
export type RunGuardrailsInput = z.output<ReturnType<typeof runGuardrailsSchema>>;
/** A run's skills settings (contracts/run-skills.ts). */
export type RunSkillsSettings = z.output<ReturnType<typeof runSkillsSchema>>;
/** One model-facing tool bound to one provider (contracts/subagent-providers.ts). */
export type SubagentToolLoad = z.output<ProviderSchemas['load']>;
/** A remote child's load (`SubagentInput.remote`). */
export type RemoteChildLoad = z.output<ProviderSchemas['remoteChild']>;
/** What `leadRunWorkflow` starts with (contracts/lead.ts). */
export type LeadRunInput = z.output<InputSchemas['leadRun']>;
/** What `subagentWorkflow` starts with (contracts/subagent.ts). */
export type SubagentInput = z.output<InputSchemas['subagent']>;
/** What `batchWorkflow` starts with (contracts/batch.ts). */
export type BatchInput = z.output<InputSchemas['batch']>;
/** What a whole run shares, carried unchanged from the lead to each child and batch item (contracts/run-scope.ts). */
export type RunScope = z.output<ReturnType<typeof runScopeSchema>>;
