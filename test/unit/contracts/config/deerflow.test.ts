import { parse } from 'yaml';
import { parseConfig } from '../../../../contracts/config';
import { resolveAgent, resolveLeadModel } from '../../../../contracts/config/agents';

// The example block of the seeds' "Limits, Budgets, and Capacity" chapter, verbatim.
const SEED_EXAMPLE = `
subagent_runtime:              # restart required; shared by task and batches
  max_running: 3
  max_queued: 64
  admission_policy: queue       # or reject
  queue_timeout_seconds: 300
 
subagents:
  timeout_seconds: 1800         # default timeout for built-in subagents
  # max_turns: 120              # global turn override for built-ins; unset keeps 150 / 60
  max_total_per_run: 6          # delegations per run, 1 to 50
 
  token_budget:
    enabled: true
    max_tokens: 2000000
    warn_threshold: 0.7
 
  agents:
    general-purpose:
      timeout_seconds: 2700     # 45 minutes for deep research
      max_turns: 250
      token_budget:
        max_tokens: 3000000
    bash:
      timeout_seconds: 300
      max_turns: 80
`;

// Sections and keys as DeerFlow's own config.yaml writes them.
const DEERFLOW_CONFIG = `
config_version: 33
log_level: info
token_usage:
  enabled: true
models:
  - name: gpt-4
    display_name: GPT-4
    use: langchain_openai:ChatOpenAI
    model: gpt-4
    api_key: $OPENAI_API_KEY
    request_timeout: 600.0
    max_retries: 2
    max_tokens: 4096
    context_window: 128000
    temperature: 0.7
    supports_vision: true
tools:
  - name: web_search
    group: web
    use: deerflow.community.ddg_search.tools:web_search_tool
    max_results: 5
loop_detection:
  enabled: true
  warn_threshold: 3
  hard_limit: 5
  window_size: 20
  max_tracked_threads: 100
  tool_freq_warn: 30
  tool_freq_hard_limit: 50
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
  allow_host_bash: false
  bash_output_max_chars: 20000
  read_file_output_max_chars: 50000
  ls_output_max_chars: 20000
  bash_command_timeout: 600
skills:
  container_path: /mnt/skills
summarization:
  enabled: true
  model_name: null
  trigger:
    - type: tokens
      value: 32000
  keep:
    type: messages
    value: 10
  trim_tokens_to_summarize: 15564
  summary_prompt: null
scheduler:
  enabled: true
`;

describe('a DeerFlow user’s config', () => {
  it('accepts the seeds’ subagent_runtime + subagents example as is', () => {
    const { config, warnings } = parseConfig(parse(SEED_EXAMPLE));
    expect(warnings).toEqual([]);
    expect(config.subagent_runtime).toMatchObject({
      max_running: 3,
      max_queued: 64,
      admission_policy: 'queue',
    });

    const general = resolveAgent(config, 'general-purpose');
    expect(general).toMatchObject({ timeout_seconds: 2700, max_turns: 250 });
    expect(general.token_budget.max_tokens).toBe(3_000_000);

    const bash = resolveAgent(config, 'bash');
    expect(bash).toMatchObject({ timeout_seconds: 300, max_turns: 80 });
    expect(bash.token_budget.max_tokens).toBe(2_000_000);
  });

  it('reads the sections it knows from a whole DeerFlow config.yaml, DeerFlow spellings included', () => {
    const { config } = parseConfig(parse(DEERFLOW_CONFIG));
    expect(resolveLeadModel(config)).toEqual({
      name: 'gpt-4',
      provider: 'openai',
      model: 'gpt-4',
      api_key_env: 'OPENAI_API_KEY',
      max_tokens: 4096,
      temperature: 0.7,
      request_timeout_seconds: 600,
    });
    expect(config.sandbox).toEqual({
      allow_host_bash: false,
      bash_timeout_seconds: 600,
      output_cap_chars: 20_000,
    });
    expect(config.summarization).toEqual({ enabled: true, trigger_tokens: 32_000, keep_messages: 10 });
    expect(config.loop_detection.hard_limit).toBe(5);
    expect(config.skills).toEqual({
      path: './skills',
      container_path: '/mnt/skills',
      deferred_discovery: false,
    });
  });

  it('warns once about the sections it does not read, and names the DeerFlow keys it ignores', () => {
    const { warnings } = parseConfig(parse(DEERFLOW_CONFIG));
    const sectionWarnings = warnings.filter((w) => w.startsWith('ignoring sections'));
    expect(sectionWarnings).toHaveLength(1);
    expect(sectionWarnings[0]).toContain('config_version, log_level, token_usage, scheduler (it reads');
    expect(warnings).toContain(
      'models[0]: ignoring DeerFlow keys this project does not use: supports_vision, context_window, max_retries',
    );
    expect(warnings).toContain(
      'loop_detection: ignoring DeerFlow keys this project does not use: max_tracked_threads',
    );
  });

  it('treats a section left with only comments (YAML null) as absent', () => {
    const { config, warnings } = parseConfig(parse('subagents:\n  # max_turns: 120\nmodels:\n'));
    expect(warnings).toEqual([]);
    expect(config.subagents.max_total_per_run).toBe(6);
    expect(resolveLeadModel(config).provider).toBe('scripted');
  });

  it('reads $NAME values from the environment, but keeps api keys as references', () => {
    const raw = parse(`
models:
  - name: local
    use: langchain_openai:ChatOpenAI
    model: $MODEL_ID
    base_url: \${VLLM_URL}
    api_key: $VLLM_API_KEY
`);
    const env = { MODEL_ID: 'qwen3', VLLM_URL: 'http://localhost:8000/v1', VLLM_API_KEY: 'not-to-be-read' };
    const model = resolveLeadModel(parseConfig(raw, { env }).config);
    expect(model).toEqual({
      name: 'local',
      provider: 'openai',
      model: 'qwen3',
      base_url: 'http://localhost:8000/v1',
      api_key_env: 'VLLM_API_KEY',
    });
    expect(() => parseConfig(raw, { env: {} })).toThrow(
      'models[0].model: "$MODEL_ID" is not set in the environment',
    );
  });

  it('accepts a custom agent’s tools written as a plain list, and model: inherit', () => {
    const { config } = parseConfig({
      models: [
        { name: 'big', provider: 'scripted' },
        { name: 'small', provider: 'scripted' },
      ],
      subagents: {
        model: 'small',
        custom_agents: {
          analysis: {
            description: 'Data analysis',
            system_prompt: 'Analyse.',
            tools: ['bash', 'read_file'],
            model: 'inherit',
          },
        },
      },
    });
    const analysis = resolveAgent(config, 'analysis');
    expect(analysis.tools).toEqual(['bash', 'read_file']);
    expect(analysis.model.name).toBe('big');
  });

  it('refuses DeerFlow summarization rules it cannot honour, naming the one it can', () => {
    expect(() =>
      parseConfig({
        summarization: { trigger: [{ type: 'fraction', value: 0.8 }], keep: { type: 'tokens', value: 3000 } },
      }),
    ).toThrow(
      'summarization.trigger[0].type: "fraction" is not supported here (tokens; or write trigger_tokens)\n' +
        'summarization.keep.type: "tokens" is not supported here (messages; or write keep_messages)',
    );
  });
});
