import { CONFIG_SECTIONS, defaultConfig } from '../../../../contracts/config';
import { DEFAULT_WORKSPACE_SETTINGS } from '../../../../contracts/workspace';
import { listAgentNames, resolveAgent, resolveLeadModel } from '../../../../contracts/config/agents';
import { BUILTIN_TOOL_NAMES, DEFAULT_SANDBOX, TASK_TOOL_NAME } from '../../../../contracts/tools';

describe('the configuration with nothing written', () => {
  it('carries the seeds’ defaults', () => {
    const config = defaultConfig();
    expect(config.subagents).toEqual({
      enabled: true,
      timeout_seconds: 1800,
      max_total_per_run: 6,
      max_concurrent: 3,
      max_depth: 1,
      provider: 'spawn',
      token_budget: { enabled: true, warn_threshold: 0.7 },
      agents: {},
      custom_agents: {},
      batch: {
        enabled: false,
        max_running_items: 3,
        max_live_items: 6,
        max_attempts: 2,
        retry_backoff_seconds: 5,
        max_items: 10_000,
      },
    });
    expect(config.subagent_runtime).toEqual({
      max_running: 3,
      max_queued: 64,
      admission_policy: 'queue',
      queue_timeout_seconds: 300,
    });
    expect(config.loop_detection).toEqual({
      enabled: true,
      warn_threshold: 3,
      hard_limit: 5,
      window_size: 20,
      tool_freq_warn: 30,
      tool_freq_hard_limit: 50,
      tool_freq_overrides: {},
    });
    expect(config.summarization).toEqual({ enabled: false, trigger_tokens: 80_000, keep_messages: 10 });
    expect(config.sandbox).toEqual(DEFAULT_SANDBOX);
    expect(config.temporal).toEqual({ task_queue: 'durable-subagents' });
    expect(config.workspace).toEqual({ ...DEFAULT_WORKSPACE_SETTINGS, root: './workspace' });
    expect(config.metrics).toEqual({ host: '127.0.0.1' });
    expect(config.tracing).toEqual({
      enabled: false,
      exporter: 'otlp',
      otlp_endpoint: 'http://localhost:4318/v1/traces',
      service_name: 'durable-subagents',
    });
  });

  it('runs the offline scripted model when no model is configured', () => {
    expect(resolveLeadModel(defaultConfig())).toEqual({
      name: 'scripted',
      provider: 'scripted',
      model: 'scripted',
    });
  });

  it('offers the two built-in agents with the seeds’ turn and time limits', () => {
    const config = defaultConfig();
    expect(listAgentNames(config)).toEqual(['general-purpose', 'bash']);

    const general = resolveAgent(config, 'general-purpose');
    expect(general).toMatchObject({ max_turns: 150, timeout_seconds: 1800, tools: [...BUILTIN_TOOL_NAMES] });
    expect(general.tools).not.toContain(TASK_TOOL_NAME);
    expect(general.token_budget).toEqual({
      enabled: true,
      max_tokens: 2_000_000,
      warn_threshold: 0.7,
      hard_threshold: 1.0,
    });

    const bash = resolveAgent(config, 'bash');
    expect(bash).toMatchObject({ max_turns: 60, timeout_seconds: 1800 });
    expect(bash.tools).toEqual(['bash', 'ls', 'read_file', 'write_file', 'str_replace']);
  });

  it('gives each built-in a prompt that asks for a final answer that stands alone', () => {
    for (const name of ['general-purpose', 'bash']) {
      const agent = resolveAgent(defaultConfig(), name);
      expect(agent.system_prompt).toMatch(/workspace/);
      expect(agent.system_prompt).toMatch(/final answer that stands on its own/);
      expect(agent.description.length).toBeGreaterThan(20);
    }
  });

  it('returns a fresh object each time, so a caller cannot change the defaults of another', () => {
    const mutated = defaultConfig();
    mutated.subagents.max_total_per_run = 50;
    expect(defaultConfig().subagents.max_total_per_run).toBe(6);
  });

  it('names the sections it reads', () => {
    expect(CONFIG_SECTIONS).toEqual([
      'models',
      'token_budget',
      'subagents',
      'subagent_runtime',
      'subagent_providers',
      'subagent_tools',
      'lead_runtime',
      'loop_detection',
      'summarization',
      'lead',
      'clarification',
      'sandbox',
      'temporal',
      'worker',
      'metrics',
      'tracing',
      'workspace',
      'safety_finish_reason',
      'payloads',
      'mcp_servers',
      'mcp_tasks',
      'tool_search',
      'tools',
      'tool_groups',
      'skills',
      'guardrails',
      'extensions_config',
      'memory',
      'circuit_breaker',
      'budgets',
      'tool_output',
      'read_before_write',
      'stream_bridge',
    ]);
  });
});
