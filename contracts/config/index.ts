/**
 * The config file, in the shape of DeerFlow's `config.yaml`, so a DeerFlow user's sections work as written.
 *
 * Sections this project does not read are ignored with one warning (a DeerFlow config has many); the keys
 * inside the sections it does read are strict, because a typo there would silently change a limit. A few
 * keys DeerFlow writes in those sections are understood as aliases or accepted and ignored (with a warning).
 *
 * Pure: no Node APIs. `worker/config.ts` reads the file and resolves relative paths.
 */
import { z } from 'zod';
import type { LoopDetectionSettings } from '../subagent';
import { problem, type ProblemPath } from '../problems';
import { ownEntry, withoutUndefined } from '../records';
import { DEFAULT_SANDBOX, SANDBOX_KINDS, TASK_TOOL_NAME, type SandboxSettings } from '../tools';
import {
  isMapping,
  normalizeDeerFlowConfig,
  parseDroppingDeerFlowKeys,
  type Env,
  type Mapping,
} from './deerflow';
import {
  bool,
  ConfigError,
  fraction,
  configIssueProblems,
  httpUrl,
  KNOWN_TOOL_NAMES,
  listOf,
  mappingOf,
  oneOf,
  positiveNumber,
  seconds,
  secondsOrOff,
  section,
  text,
  toolName,
  userId,
  wholeNumber,
} from './fields';
import { DEFAULT_RUN_ADMISSION_SETTINGS } from '../admission';
import {
  SAFETY_DETECTOR_CLASSES,
  SAFETY_DETECTORS,
  safetyDetectorClass,
  type SafetyDetectorClass,
} from '../safety-finish-reason';
import {
  DEFAULT_LEAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_CONCURRENT,
  MAX_CONCURRENT_CEILING,
  MAX_TOTAL_PER_RUN_CEILING,
} from '../lead';
import { CLARIFICATION_TOOL_NAME, DEFAULT_CLARIFICATION_TIMEOUT_SECONDS } from '../clarification';
import { DEFAULT_BATCH_LIMITS, DEFAULT_BATCH_MAX_ITEMS } from '../batch';
import { isMcpToolName } from '../mcp';
import { clampAutoPromoteTopK, DEFAULT_AUTO_PROMOTE_TOP_K } from '../tool-search';
import { extensionsConfigKey, mcpServersSection } from './mcp';
import { agentSkillsList, skillsSection } from './skills';
import { agentGuardrailsSection, guardrailsSection } from './guardrails';
import { modelsSection } from './models';
import { tokenBudgetTopSection } from './budget';
import { budgetsSection } from './budgets';
import { readBeforeWriteSection, toolOutputSection } from './tool-output';
import { applyOverrides, attributeProblem, type ConfigOverrides } from './overrides';
import { payloadsSection } from './payloads';
import { streamBridgeSection } from './stream-bridge';
import { subagentProvidersSection, subagentToolsSection, toolLoadProblems } from './providers';
import { temporalSection } from './temporal';
import { toolGroupsSection, toolsSection, type ToolEntry } from './tools';
import { circuitBreakerSection, memorySection } from './memory';
import { mcpTasksSection } from './mcp-tasks';
import { graphAgentProblems } from '../graph';
import {
  DEFAULT_WORKSPACE_SETTINGS,
  isHostId,
  WORKSPACE_MODES,
  WORKSPACE_SNAPSHOT_SWITCHES,
} from '../workspace';

export const BUILTIN_AGENT_NAMES = ['general-purpose', 'bash'] as const;
export type BuiltinAgentName = (typeof BUILTIN_AGENT_NAMES)[number];

/** The lead agent's name in model calls and scripts; no custom agent may take it. */
const LEAD_AGENT_NAME = 'lead';

/** Written as a model name, it means "the lead agent's model" (DeerFlow's spelling). */
export const INHERIT_MODEL = 'inherit';

export { ConfigError, CONFIG_KEYS } from './fields';

export const TRACING_EXPORTERS = ['otlp', 'file'] as const;
export type TracingExporter = (typeof TRACING_EXPORTERS)[number];

/** An OpenTelemetry collector's OTLP/HTTP traces endpoint on this machine. */
export const DEFAULT_OTLP_TRACES_ENDPOINT = 'http://localhost:4318/v1/traces';

function tokenBudgetSection(where: string) {
  return section(where, {
    enabled: bool.optional(),
    max_tokens: wholeNumber(1).optional(),
    warn_threshold: fraction.optional(),
  });
}

function toolFilterSection(where: string) {
  return section(where, {
    allow: listOf(toolName, 'tool names').optional(),
    deny: listOf(toolName, 'tool names').optional(),
  });
}

const agentOverride = section('subagents.agents.<name>', {
  timeout_seconds: seconds.optional(),
  max_turns: wholeNumber(1).optional(),
  token_budget: tokenBudgetSection('subagents.agents.<name>.token_budget').optional(),
  model: text.optional(),
  tools: toolFilterSection('subagents.agents.<name>.tools').optional(),
  tool_groups: listOf(text, 'tool group names').optional(),
  skills: agentSkillsList.optional(),
  guardrails: agentGuardrailsSection('subagents.agents.<name>.guardrails').optional(),
});

const customAgent = section('subagents.custom_agents.<name>', {
  description: text,
  // Required, except for a graph agent (its graph has its own prompts; a factory is handed this one).
  system_prompt: text.optional(),
  // A LangGraph graph run as the agent: `<module path>#<export>` (contracts/graph.ts).
  graph: text.optional(),
  nodes_per_turn: wholeNumber(1).optional(),
  one_time_nodes: wholeNumber(0).optional(),
  tools: toolFilterSection('subagents.custom_agents.<name>.tools').optional(),
  tool_groups: listOf(text, 'tool group names').optional(),
  skills: agentSkillsList.optional(),
  guardrails: agentGuardrailsSection('subagents.custom_agents.<name>.guardrails').optional(),
  model: text.optional(),
  max_turns: wholeNumber(1).default(50),
  timeout_seconds: seconds.default(900),
  token_budget: tokenBudgetSection('subagents.custom_agents.<name>.token_budget').optional(),
}).superRefine(
  (agent, ctx) => {
    if (agent.graph === undefined && agent.system_prompt === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['system_prompt'],
        input: undefined,
        message: 'is missing (text)',
      });
    }
  },
  // Said with the section's other problems, so a file is fixed in one pass.
  { when: (payload) => isMapping(payload.value) },
);

const subagents = section('subagents', {
  enabled: bool.default(true),
  timeout_seconds: seconds.default(1800),
  max_turns: wholeNumber(1).optional(),
  max_total_per_run: wholeNumber(1, MAX_TOTAL_PER_RUN_CEILING).default(6),
  max_concurrent: wholeNumber(1, MAX_CONCURRENT_CEILING).optional(),
  max_depth: wholeNumber(0).default(1),
  provider: oneOf(['spawn', 'fork']).default('spawn'),
  model: text.optional(),
  // max_tokens stays unset unless the user writes it: its default follows summarization.enabled.
  token_budget: section('subagents.token_budget', {
    enabled: bool.default(true),
    max_tokens: wholeNumber(1).optional(),
    warn_threshold: fraction.default(0.7),
  }).prefault({}),
  agents: mappingOf(agentOverride, 'agent overrides').prefault({}),
  custom_agents: mappingOf(customAgent, 'custom agents').prefault({}),
  // Durable batches: `enabled` offers the lead `batch_task`; the limits are the defaults of every batch (CLI,
  // API, schedules) and the ceiling of the lead's.
  batch: section('subagents.batch', {
    enabled: bool.default(false),
    max_running_items: wholeNumber(1).default(DEFAULT_BATCH_LIMITS.max_running_items),
    max_live_items: wholeNumber(1).default(DEFAULT_BATCH_LIMITS.max_live_items),
    max_attempts: wholeNumber(1, 10).default(DEFAULT_BATCH_LIMITS.max_attempts),
    retry_backoff_seconds: seconds.default(DEFAULT_BATCH_LIMITS.retry_backoff_seconds),
    max_items: wholeNumber(1).default(DEFAULT_BATCH_MAX_ITEMS),
  }).prefault({}),
});

const subagentRuntime = section('subagent_runtime', {
  max_running: wholeNumber(1).default(3),
  max_queued: wholeNumber(0).default(64),
  admission_policy: oneOf(['queue', 'reject']).default('queue'),
  queue_timeout_seconds: seconds.default(300),
  max_starts_per_second: positiveNumber.optional(),
});

// The same keys for lead runs in flight (defaults: DEFAULT_RUN_ADMISSION_SETTINGS).
const leadRuntime = section('lead_runtime', {
  max_running: wholeNumber(1).default(DEFAULT_RUN_ADMISSION_SETTINGS.max_running),
  max_queued: wholeNumber(0).default(DEFAULT_RUN_ADMISSION_SETTINGS.max_queued),
  admission_policy: oneOf(['queue', 'reject']).default('queue'),
  queue_timeout_seconds: seconds.default(DEFAULT_RUN_ADMISSION_SETTINGS.queue_timeout_seconds),
  max_starts_per_second: positiveNumber.optional(),
});

const loopDetection = section('loop_detection', {
  enabled: bool.default(true),
  warn_threshold: wholeNumber(1).default(3),
  hard_limit: wholeNumber(1).default(5),
  window_size: wholeNumber(1).default(20),
  tool_freq_warn: wholeNumber(1).default(30),
  tool_freq_hard_limit: wholeNumber(1).default(50),
  tool_freq_overrides: mappingOf(
    section('loop_detection.tool_freq_overrides.<tool>', {
      warn: wholeNumber(1),
      hard_limit: wholeNumber(1),
    }),
    'per-tool thresholds',
  ).prefault({}),
}).transform((settings): LoopDetectionSettings => settings);

const summarization = section('summarization', {
  enabled: bool.default(false),
  model: text.optional(),
  trigger_tokens: wholeNumber(1).default(80_000),
  keep_messages: wholeNumber(1).default(10),
  summary_prompt: text.optional(),
  // The tools whose read of a SKILL.md activates its skill and is remembered through compaction (DeerFlow's).
  skill_file_read_tool_names: listOf(text, 'tool names').optional(),
});

// The lead agent's own budgets (DeerFlow has none of these for its lead; they are this project's).
const lead = section('lead', {
  max_turns: wholeNumber(1).default(100),
  timeout_seconds: secondsOrOff.default(DEFAULT_LEAD_TIMEOUT_SECONDS),
  token_budget: tokenBudgetSection('lead.token_budget').optional(),
  fairness_key: text.optional(),
  /** Whose runs these are (contracts/user.ts); `--user` sets it. Absent: `default`. */
  user_id: userId.optional(),
  // The skills the lead gets (absent: every enabled skill; []: none), as an agent's `skills:` list.
  skills: agentSkillsList.optional(),
});

// Human in the loop (`ask_clarification`): offered to the lead when enabled, to a custom agent whose tools.allow
// lists it; a question waits timeout_seconds for its answer (`subagents answer`).
const clarification = section('clarification', {
  enabled: bool.default(true),
  timeout_seconds: seconds.default(DEFAULT_CLARIFICATION_TIMEOUT_SECONDS),
});

const sandbox = section('sandbox', {
  use: text.optional(),
  kind: oneOf(SANDBOX_KINDS).optional(),
  allow_host_bash: bool.default(DEFAULT_SANDBOX.allow_host_bash),
  bash_timeout_seconds: seconds.default(DEFAULT_SANDBOX.bash_timeout_seconds),
  output_cap_chars: wholeNumber(1).default(DEFAULT_SANDBOX.output_cap_chars),
  max_processes: wholeNumber(1, 1_000_000).optional(),
  max_memory_mb: wholeNumber(16, 1_048_576).optional(),
  max_total_memory_mb: wholeNumber(16, 1_048_576).optional(),
  max_file_size_mb: wholeNumber(1, 1_048_576).optional(),
  max_cpu_seconds: wholeNumber(1, 86_400).optional(),
}).transform(
  // `use` names a DeerFlow sandbox class; ours is chosen by `kind`. Keys not written (kind, the limits) stay
  // absent: their defaults apply where bash reads them.
  ({ use: _use, ...settings }, ctx): SandboxSettings => {
    if (settings.kind === 'host' && !settings.allow_host_bash) {
      ctx.issues.push({
        code: 'custom',
        path: ['kind'],
        input: settings.kind,
        message: 'needs allow_host_bash: true (commands would run unsandboxed on the worker machine)',
      });
      return z.NEVER;
    }
    return withoutUndefined(settings);
  },
);

// A worker's own tuning (read when it starts). Absent keys keep the SDK's defaults.
const worker = section('worker', {
  // Workflows kept in the worker's cache (the SDK's maxCachedWorkflows; 0: none, else at least 2).
  max_cached_workflows: wholeNumber(0).optional(),
  // This worker's host: names its own task queue (`<task_queue>@<host_id>`) where runs homed here send their
  // workspace calls. Default: the host name and an id made when the worker starts.
  host_id: text.optional(),
}).superRefine((settings, ctx) => {
  if (settings.host_id !== undefined && !isHostId(settings.host_id)) {
    ctx.addIssue({
      code: 'custom',
      path: ['host_id'],
      input: settings.host_id,
      message:
        'is not a host id (letters, digits, ".", "_", "-"; up to 128, starting with a letter or digit)',
    });
  }
  if (settings.max_cached_workflows === 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['max_cached_workflows'],
      input: 1,
      message: 'is too small for a cache (0 turns it off; a cache holds at least 2)',
    });
  }
});

// Observability of the workers this process runs (read when a worker starts). Both are off unless written.
const metrics = section('metrics', {
  // The Prometheus endpoint (http://host:port/metrics) of the SDK's runtime: its own metrics and the project's.
  port: wholeNumber(1, 65535).optional(),
  host: text.default('127.0.0.1'),
});

const tracing = section('tracing', {
  enabled: bool.default(false),
  // Where spans go: otlp (OTLP/HTTP JSON to otlp_endpoint) or file (one JSON line a span).
  exporter: oneOf(TRACING_EXPORTERS).default('otlp'),
  otlp_endpoint: httpUrl.default(DEFAULT_OTLP_TRACES_ENDPOINT),
  file: text.optional(),
  service_name: text.default('durable-subagents'),
}).superRefine((settings, ctx) => {
  if (settings.enabled && settings.exporter === 'file' && settings.file === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['file'],
      input: undefined,
      message: 'is missing (exporter: file writes spans to this file)',
    });
  }
});

// Deferred MCP tools (DeerFlow's tool_search): MCP tools reach the model by name until `tool_search` loads them.
const toolSearch = section('tool_search', {
  enabled: bool.default(false),
  // Deferred MCP schemas promoted before a model call when their routing keywords match (DeerFlow clamps to 1..5).
  auto_promote_top_k: wholeNumber(0)
    .default(DEFAULT_AUTO_PROMOTE_TOP_K)
    .transform((k) => clampAutoPromoteTopK(k)),
});

// Where runs' folders are made, and how they follow a run across worker hosts (contracts/workspace.ts).
// DeerFlow's `safety_finish_reason`: which finish reasons mean "stopped for safety" (contracts/safety-finish-reason.ts).
const safetyDetector = section('safety_finish_reason.detectors[]', {
  use: text.refine((use) => safetyDetectorClass(use) !== undefined, {
    error: `is not a detector this project has (${SAFETY_DETECTOR_CLASSES.join(', ')}, or DeerFlow's paths to them)`,
  }),
  config: section('safety_finish_reason.detectors[].config', {
    finish_reasons: listOf(text, 'finish reasons').optional(),
    stop_reasons: listOf(text, 'stop reasons').optional(),
  }).optional(),
});
const safetyFinishReason = section('safety_finish_reason', {
  enabled: bool.default(true),
  detectors: listOf(safetyDetector, 'detectors')
    .min(1, { error: 'is empty (use enabled: false)' })
    .optional(),
});

const workspace = section('workspace', {
  root: text.default('./workspace'),
  sample_dir: text.optional(),
  // local: each host its own disk (a home host per run, saved to the payload store); shared: one filesystem.
  mode: oneOf(WORKSPACE_MODES).default(DEFAULT_WORKSPACE_SETTINGS.mode),
  // auto: on for `subagents worker`, off for the worker a command runs itself (one process, one disk).
  snapshots: oneOf(WORKSPACE_SNAPSHOT_SWITCHES).default(DEFAULT_WORKSPACE_SETTINGS.snapshots),
  snapshot: section('workspace.snapshot', {
    exclude: listOf(text, 'glob patterns').default([]),
    max_bytes: wholeNumber(1).default(DEFAULT_WORKSPACE_SETTINGS.snapshot.max_bytes),
  }).prefault({}),
});

const sections = {
  models: modelsSection,
  token_budget: tokenBudgetTopSection.prefault({}),
  subagents: subagents.prefault({}),
  subagent_runtime: subagentRuntime.prefault({}),
  subagent_providers: subagentProvidersSection.prefault({}),
  subagent_tools: subagentToolsSection.prefault([]),
  lead_runtime: leadRuntime.prefault({}),
  loop_detection: loopDetection.prefault({}),
  summarization: summarization.prefault({}),
  lead: lead.prefault({}),
  clarification: clarification.prefault({}),
  sandbox: sandbox.prefault({}),
  temporal: temporalSection,
  worker: worker.prefault({}),
  metrics: metrics.prefault({}),
  tracing: tracing.prefault({}),
  workspace: workspace.prefault({}),
  safety_finish_reason: safetyFinishReason.prefault({}),
  payloads: payloadsSection,
  mcp_servers: mcpServersSection.prefault({}),
  // DeerFlow's long-running MCP tasks (contracts/config/mcp-tasks.ts); absent: off, as DeerFlow's default.
  mcp_tasks: mcpTasksSection.optional(),
  tool_search: toolSearch.prefault({}),
  // DeerFlow's tools list (contracts/config/tools.ts); absent: the sandbox's five tools, as before it was read.
  tools: toolsSection.optional(),
  tool_groups: toolGroupsSection.prefault([]),
  skills: skillsSection.prefault({}),
  guardrails: guardrailsSection.prefault({}),
  extensions_config: extensionsConfigKey.optional(),
  // DeerFlow's `memory:` and `circuit_breaker:` (contracts/config/memory.ts); absent: none.
  memory: memorySection.optional(),
  circuit_breaker: circuitBreakerSection.optional(),
  budgets: budgetsSection.prefault({}),
  // DeerFlow's large tool outputs and write gate (contracts/config/tool-output.ts); absent: off.
  tool_output: toolOutputSection.optional(),
  read_before_write: readBeforeWriteSection.optional(),
  stream_bridge: streamBridgeSection.prefault({}),
};

/** The top-level sections this project reads; any other section is ignored with a warning. */
export const CONFIG_SECTIONS: readonly string[] = Object.keys(sections);

const sectionsSchema = z.object(sections);

const configSchema = sectionsSchema
  .superRefine((config, ctx) => {
    for (const [path, input, message] of crossSectionProblems(config)) {
      ctx.addIssue({ code: 'custom', path: [...path], input, message });
    }
  })
  .transform((config) => ({
    ...config,
    models: withSafetyFinishReasons(config.models, config.safety_finish_reason),
    subagents: {
      ...config.subagents,
      // Per-response concurrency (the seeds' SubagentLimitMiddleware): 3 unless set (1–4), and never more than
      // the workers can run at once. Flags are written in before this, so a lower --max-running lowers it.
      max_concurrent: Math.min(
        config.subagents.max_concurrent ?? DEFAULT_MAX_CONCURRENT,
        config.subagent_runtime.max_running,
      ),
    },
  }));

/**
 * Every model carries the finish reasons that stop it for safety when the section changes them (off: none); left
 * as written, the workflow uses the built-in set, and the inputs keep the shape they had.
 */
function withSafetyFinishReasons<M extends object>(
  models: M[],
  section: z.output<typeof safetyFinishReason>,
): (M & { safety_finish_reasons?: string[] })[] {
  let reasons: string[] | undefined;
  if (!section.enabled) reasons = [];
  else if (section.detectors) {
    reasons = section.detectors.flatMap(({ use, config }) => {
      const detector = SAFETY_DETECTORS[safetyDetectorClass(use) as SafetyDetectorClass];
      return config?.[detector.key] ?? [...detector.defaults];
    });
  }
  return reasons === undefined
    ? models
    : models.map((model) => ({ ...model, safety_finish_reasons: reasons }));
}

export type Config = z.output<typeof configSchema>;
export type AgentOverride = z.output<typeof agentOverride>;
export type CustomAgentConfig = z.output<typeof customAgent>;
export type TokenBudgetOverride = z.output<ReturnType<typeof tokenBudgetSection>>;
export type MetricsSettings = z.output<typeof metrics>;
export type { SkillsSettings } from './skills';
export type { GuardrailsSettings } from './guardrails';
export type TracingSettings = z.output<typeof tracing>;
export type { ToolEntry };

type CrossProblem = [path: ProblemPath, input: unknown, message: string];

/** Checks that span keys: names that must refer to something, thresholds that must be ordered. */
function crossSectionProblems(config: z.output<typeof sectionsSchema>): CrossProblem[] {
  const out: CrossProblem[] = [];
  const modelNames = config.models.map((model) => model.name);
  config.models.forEach((model, index) => {
    if (model.name === INHERIT_MODEL) {
      out.push([['models', index, 'name'], model.name, 'is reserved (it means "the lead\'s model")']);
    } else if (modelNames.indexOf(model.name) !== index) {
      out.push([['models', index, 'name'], model.name, 'is listed twice (model names must be unique)']);
    }
  });
  const checkModel = (path: ProblemPath, name: string | undefined): void => {
    if (name !== undefined && name !== INHERIT_MODEL && !modelNames.includes(name)) {
      out.push([path, name, `is not a configured model (${[...modelNames, INHERIT_MODEL].join(', ')})`]);
    }
  };
  checkModel(['subagents', 'model'], config.subagents.model);
  checkModel(['summarization', 'model'], config.summarization.model);

  const { agents, custom_agents: customAgents } = config.subagents;
  const builtins: readonly string[] = BUILTIN_AGENT_NAMES;
  for (const [name, custom] of Object.entries(customAgents)) {
    if (builtins.includes(name) || name === LEAD_AGENT_NAME) {
      out.push([
        ['subagents', 'custom_agents', name],
        undefined,
        `is a reserved agent name (${[...builtins, LEAD_AGENT_NAME].join(', ')}); ` +
          `adjust built-in agents under subagents.agents`,
      ]);
    }
    checkModel(['subagents', 'custom_agents', name, 'model'], custom.model);
    out.push(...graphAgentProblems(name, custom, agents));
  }
  const agentNames = [...builtins, ...Object.keys(customAgents)];
  for (const [name, override] of Object.entries(agents)) {
    if (!agentNames.includes(name)) {
      out.push([['subagents', 'agents', name], undefined, `is not an agent (${agentNames.join(', ')})`]);
    }
    if (builtins.includes(name) && override.tools?.allow?.includes(TASK_TOOL_NAME)) {
      out.push([
        ['subagents', 'agents', name, 'tools', 'allow'],
        undefined,
        `lists ${TASK_TOOL_NAME}, but built-in agents never delegate (define a custom agent for nested delegation)`,
      ]);
    }
    if (builtins.includes(name) && override.tools?.allow?.includes(CLARIFICATION_TOOL_NAME)) {
      out.push([
        ['subagents', 'agents', name, 'tools', 'allow'],
        undefined,
        `lists ${CLARIFICATION_TOOL_NAME}, but built-in agents work without asking questions back ` +
          '(define a custom agent that may ask)',
      ]);
    }
    checkModel(['subagents', 'agents', name, 'model'], override.model);
  }

  out.push(...toolLoadProblems(config.subagent_providers, config.subagent_tools, checkModel));
  out.push(...toolGroupProblems(config));

  const batch = config.subagents.batch;
  if (batch.max_running_items > batch.max_live_items) {
    out.push([
      ['subagents', 'batch', 'max_running_items'],
      batch.max_running_items,
      `is above max_live_items (${batch.max_live_items}): running items are live items`,
    ]);
  }

  const loop = config.loop_detection;
  const ordered = (path: ProblemPath, warn: number, hard: number, warnKey: string, hardKey: string): void => {
    if (warn >= hard) out.push([path, warn, `is not below ${hardKey} (${warnKey} < ${hardKey} = ${hard})`]);
  };
  ordered(
    ['loop_detection', 'warn_threshold'],
    loop.warn_threshold,
    loop.hard_limit,
    'warn_threshold',
    'hard_limit',
  );
  if (loop.hard_limit > loop.window_size) {
    out.push([
      ['loop_detection', 'hard_limit'],
      loop.hard_limit,
      `is larger than window_size, so the stop could never fire (at most window_size = ${loop.window_size})`,
    ]);
  }
  ordered(
    ['loop_detection', 'tool_freq_warn'],
    loop.tool_freq_warn,
    loop.tool_freq_hard_limit,
    'tool_freq_warn',
    'tool_freq_hard_limit',
  );
  for (const [tool, override] of Object.entries(loop.tool_freq_overrides)) {
    ordered(
      ['loop_detection', 'tool_freq_overrides', tool, 'warn'],
      override.warn,
      override.hard_limit,
      'warn',
      'hard_limit',
    );
  }

  return out;
}

/** An agent's `tool_groups` name groups of the `tools:` list; a tool's `group`, one `tool_groups:` lists. */
function toolGroupProblems(config: z.output<typeof sectionsSchema>): CrossProblem[] {
  const out: CrossProblem[] = [];
  const declared = config.tool_groups.map((group) => group.name);
  const used = (config.tools ?? []).flatMap((entry: ToolEntry) => (entry.group ? [entry.group] : []));
  const known = [...new Set([...declared, ...used])];
  (config.tools ?? []).forEach((entry: ToolEntry, index) => {
    if (declared.length > 0 && entry.group !== undefined && !declared.includes(entry.group)) {
      out.push([['tools', index, 'group'], entry.group, `is not in tool_groups (${declared.join(', ')})`]);
    }
  });
  const { agents, custom_agents: customAgents } = config.subagents;
  for (const [kind, entries] of [
    ['agents', agents],
    ['custom_agents', customAgents],
  ] as const) {
    for (const [name, agent] of Object.entries(entries)) {
      (agent.tool_groups ?? []).forEach((group, index) => {
        if (!known.includes(group)) {
          const groups = known.length > 0 ? known.join(', ') : 'none: the config has no tools: section';
          out.push([
            ['subagents', kind, name, 'tool_groups', index],
            group,
            `is not a tool group (${groups})`,
          ]);
        }
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Entry points

export interface ParseOptions {
  /** Where `$NAME` values come from. Without it they stay as written (api keys are never read). */
  env?: Env;
  /** Settings given outside the file (command-line flags), checked as if the file said them. */
  overrides?: ConfigOverrides;
  /** The file the content was read from, named above its problems. */
  file?: string;
}

export interface ParsedConfig {
  config: Config;
  /** Things the user should know that do not stop the run; the caller prints them. */
  warnings: string[];
  /** The file's top-level sections: those read, and those ignored (`doctor` shows both). */
  sections: ConfigSections;
}

export interface ConfigSections {
  read: string[];
  ignored: string[];
}

/** Validates a config file's content (already read from YAML) and applies every default. */
export function parseConfig(raw: unknown, options: ParseOptions = {}): ParsedConfig {
  const source = raw ?? {};
  if (!isMapping(source)) {
    throw configError(options.file, [
      problem([], source, `is not a mapping (sections: ${CONFIG_SECTIONS.join(', ')})`),
    ]);
  }
  const unknown = Object.keys(source).filter((name) => !CONFIG_SECTIONS.includes(name));
  const sectionWarnings =
    unknown.length === 0
      ? []
      : [
          `ignoring sections this project does not read: ${unknown.join(', ')} (it reads ${CONFIG_SECTIONS.join(', ')})`,
        ];
  const normalized = normalizeDeerFlowConfig(source, CONFIG_SECTIONS, options.env);
  // MCP servers' and remote providers' `$NAME` values are read by the worker that connects, from its own
  // environment (config/mcp.ts, config/providers.ts): they never reach a workflow input.
  const unresolved = normalizeDeerFlowConfig(
    source,
    ['mcp_servers', 'subagent_providers'],
    undefined,
  ).sections;
  for (const name of ['mcp_servers', 'subagent_providers']) {
    if (unresolved[name] !== undefined) normalized.sections[name] = unresolved[name];
  }
  const { sections, sources } = applyOverrides(normalized.sections, options.overrides);
  const dropped: string[] = [];
  const parsed = parseDroppingDeerFlowKeys(configSchema, sections, dropped);
  const problems = [
    ...normalized.problems,
    ...(parsed.success ? [] : parsed.error.issues.flatMap(configIssueProblems)),
  ];
  if (!parsed.success || problems.length > 0) {
    const attributed = problems.map((line) => attributeProblem(line, sources));
    const given = attributed.filter((line, i) => line !== problems[i]);
    throw configError(options.file, attributed, given.length);
  }

  const config = parsed.data;
  const droppedWarnings =
    dropped.length === 0
      ? []
      : [`ignoring DeerFlow keys this project does not read (yet): ${dropped.join(', ')}`];
  const warnings = [
    ...sectionWarnings,
    ...normalized.warnings,
    ...droppedWarnings,
    ...configWarnings(config, sections),
  ];
  const read = Object.keys(source).filter((name) => CONFIG_SECTIONS.includes(name));
  return { config, warnings, sections: { read, ignored: unknown } };
}

/** Every problem; the file is named above them unless each is a given value's (a flag names itself). */
function configError(file: string | undefined, problems: string[], given = 0): ConfigError {
  if (file === undefined || given === problems.length) return new ConfigError(problems);
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  const where = given === 0 ? `config file ${file} has` : `config file ${file} and the command line have`;
  return new ConfigError(problems, `${where} ${count}:`);
}

/** The configuration with nothing written: every default. */
export function defaultConfig(): Config {
  return parseConfig({}).config;
}

function configWarnings(config: Config, prepared: Mapping): string[] {
  const out: string[] = [];
  const requested = isMapping(prepared.subagents) ? prepared.subagents.max_concurrent : undefined;
  if (typeof requested === 'number' && requested > config.subagents.max_concurrent) {
    out.push(
      `subagents.max_concurrent: ${requested} is above subagent_runtime.max_running, ` +
        `so ${config.subagents.max_concurrent} is used`,
    );
  }
  const { max_depth: maxDepth, agents, custom_agents: customAgents } = config.subagents;
  if (maxDepth <= 1) {
    for (const [name, custom] of Object.entries(customAgents)) {
      const override = ownEntry(agents, name)?.tools;
      const allow = override?.allow ?? custom.tools?.allow ?? [];
      const deny = override?.deny ?? custom.tools?.deny ?? [];
      if (allow.includes(TASK_TOOL_NAME) && !deny.includes(TASK_TOOL_NAME)) {
        out.push(
          `subagents: ${name} may call ${TASK_TOOL_NAME}, but subagents.max_depth is ${maxDepth}, ` +
            `so its delegations will be refused`,
        );
      }
    }
  }
  if (!config.subagents.enabled && config.subagent_tools.length > 0) {
    out.push('subagent_tools: unused while subagents.enabled is false (the lead delegates nothing)');
  }
  const tools: readonly string[] = KNOWN_TOOL_NAMES;
  const strangers = Object.keys(config.loop_detection.tool_freq_overrides).filter(
    (tool) => !tools.includes(tool) && !isMcpToolName(tool),
  );
  if (strangers.length > 0) {
    out.push(
      `loop_detection.tool_freq_overrides: no such tools here, thresholds unused: ${strangers.join(', ')}`,
    );
  }
  return out;
}
