import { parseConfig } from '../../../../contracts/config';
import { configProblems } from '../../../support/config-problems';

const problemsOf = (raw: unknown): string[] => configProblems(raw);

describe('config problems', () => {
  it('says a value is out of range with the range', () => {
    expect(problemsOf({ subagents: { max_total_per_run: 80 } })).toEqual([
      'subagents.max_total_per_run: 80 is out of range (1–50)',
    ]);
  });

  it('refuses a workflow cache of one (0 turns it off, a cache holds at least 2)', () => {
    expect(problemsOf({ worker: { max_cached_workflows: 1 } })).toEqual([
      'worker.max_cached_workflows: 1 is too small for a cache (0 turns it off; a cache holds at least 2)',
    ]);
    expect(parseConfig({ worker: { max_cached_workflows: 200 } }).config.worker).toEqual({
      max_cached_workflows: 200,
    });
    expect(parseConfig({}).config.worker).toEqual({});
  });

  it('ignores an unknown top-level section with one warning, not an error', () => {
    const { config, warnings } = parseConfig({ scheduler: { enabled: true }, title: { max_words: 6 } });
    expect(config.subagents.enabled).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^ignoring sections this project does not read: scheduler, title \(it reads models, /,
    );
  });

  it('refuses an unknown key inside a section only this project has, naming it and listing the accepted keys', () => {
    const [line] = problemsOf({ subagent_runtime: { max_total: 10 } });
    expect(line).toMatch(/^subagent_runtime\.max_total: unknown key \(accepted: max_running, /);
  });

  it('refuses a misspelt key inside a section DeerFlow also has', () => {
    expect(problemsOf({ subagents: { agents: { bash: { max_turn: 3 } } } })[0]).toMatch(
      /^subagents\.agents\.bash\.max_turn: unknown key \(accepted: timeout_seconds, max_turns, /,
    );
    expect(problemsOf({ sandbox: { bash_timeout_secnds: 3 } })[0]).toMatch(
      /^sandbox\.bash_timeout_secnds: unknown key \(accepted: /,
    );
  });

  it('drops a key DeerFlow adds to its own sections (it adds some every month), with a warning', () => {
    const { config, warnings } = parseConfig({
      subagents: { max_total: 10, max_turns: 7 },
      tool_search: { enabled: true, auto_promote_top_k: 9 },
      models: [{ name: 'm', provider: 'openai', model: 'gpt', supports_audio: true }],
    });
    expect(config.subagents.max_turns).toBe(7);
    expect(config.tool_search).toEqual({ enabled: true, auto_promote_top_k: 5 }); // read, clamped as DeerFlow does
    expect(warnings).toContain(
      'ignoring DeerFlow keys this project does not read (yet): models[0].supports_audio, subagents.max_total',
    );
  });

  it('lists every problem, one per line', () => {
    const problems = problemsOf({
      subagent_runtime: { admission_policy: 'fifo', max_running: 0 },
      subagents: { enabled: 'yes', max_turns: 1.5 },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'subagent_runtime.admission_policy: "fifo" is not an accepted value (queue, reject)',
        'subagent_runtime.max_running: 0 is out of range (1 or more)',
        'subagents.enabled: "yes" is not true or false',
        'subagents.max_turns: 1.5 is not a whole number (1 or more)',
      ]),
    );
    expect(problems).toHaveLength(4);
  });

  it('refuses a literal api key without echoing it', () => {
    const problems = problemsOf({
      models: [
        { name: 'gpt', use: 'langchain_openai:ChatOpenAI', model: 'gpt-4o', api_key: 'sk-secret-123' },
      ],
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^models\[0\]\.api_key: is a literal key, which is refused/);
    expect(problems[0]).toContain('never enter workflow history');
    expect(problems.join('\n')).not.toContain('sk-secret-123');
    expect(problemsOf({ temporal: { api_key: 'tc-literal' } })[0]).toMatch(
      /^temporal\.api_key: is a literal key/,
    );
  });

  it('says which model classes exist when `use` names another', () => {
    expect(
      problemsOf({ models: [{ name: 'ds', use: 'langchain_deepseek:ChatDeepSeek', model: 'c' }] }),
    ).toEqual([
      'models[0].use: "langchain_deepseek:ChatDeepSeek" is not a model class this project runs ' +
        '(langchain_openai:ChatOpenAI, langchain_openai:AzureChatOpenAI, langchain_anthropic:ChatAnthropic, ' +
        'langchain_google_genai:ChatGoogleGenerativeAI, langchain_aws:ChatBedrockConverse, ' +
        'langchain_ollama:ChatOllama; or set provider: scripted | openai | anthropic | google | bedrock | ' +
        'azure_openai | ollama)',
    ]);
    expect(problemsOf({ models: [{ name: 'x' }] })[0]).toMatch(
      /^models\[0\]\.provider: is missing \(scripted, openai, anthropic/,
    );
    expect(problemsOf({ models: [{ name: 'x', provider: 'openai' }] })[0]).toBe(
      "models[0].model: is missing (the provider's model id, e.g. gpt-4o-mini)",
    );
  });

  it('refuses references to models and agents that do not exist', () => {
    expect(problemsOf({ subagents: { model: 'gpt-5', agents: { reseach: {} } } })).toEqual([
      'subagents.model: "gpt-5" is not a configured model (scripted, inherit)',
      'subagents.agents.reseach: is not an agent (general-purpose, bash)',
    ]);
  });

  it('refuses unknown tool names in allow and deny lists', () => {
    expect(
      problemsOf({
        subagents: {
          custom_agents: {
            a: { description: 'A', system_prompt: 'P', tools: { allow: ['bash'], deny: ['web_browse'] } },
          },
        },
      }),
    ).toEqual([
      'subagents.custom_agents.a.tools.deny[0]: "web_browse" is not a known tool ' +
        '(bash, ls, read_file, write_file, str_replace, glob, grep, web_search, web_fetch, image_search, task, ' +
        'ask_clarification)',
    ]);
  });

  it('keeps built-in agents from delegating and custom agents off built-in names', () => {
    expect(
      problemsOf({ subagents: { agents: { bash: { tools: { allow: ['bash', 'task'] } } } } })[0],
    ).toMatch(/^subagents\.agents\.bash\.tools\.allow: lists task, but built-in agents never delegate/);
    expect(
      problemsOf({ subagents: { custom_agents: { bash: { description: 'd', system_prompt: 'p' } } } })[0],
    ).toMatch(/^subagents\.custom_agents\.bash: is a reserved agent name/);
  });

  it('requires a custom agent to say what it is for', () => {
    expect(problemsOf({ subagents: { custom_agents: { a: {} } } })).toEqual([
      'subagents.custom_agents.a.description: is missing (text)',
      'subagents.custom_agents.a.system_prompt: is missing (text)',
    ]);
  });

  it('checks that loop-detection warnings come before the stop', () => {
    expect(problemsOf({ loop_detection: { warn_threshold: 5, hard_limit: 5 } })).toEqual([
      'loop_detection.warn_threshold: 5 is not below hard_limit (warn_threshold < hard_limit = 5)',
    ]);
    expect(
      problemsOf({ loop_detection: { tool_freq_overrides: { bash: { warn: 300, hard_limit: 150 } } } }),
    ).toEqual([
      'loop_detection.tool_freq_overrides.bash.warn: 300 is not below hard_limit (warn < hard_limit = 150)',
    ]);
    expect(problemsOf({ loop_detection: { hard_limit: 30 } })[0]).toMatch(
      /^loop_detection\.hard_limit: 30 is larger than window_size/,
    );
  });

  it('checks Temporal connection settings', () => {
    expect(problemsOf({ temporal: { address: 'localhost' } })).toEqual([
      'temporal.address: "localhost" is not host:port (e.g. localhost:7233, port 1–65535)',
    ]);
    expect(parseConfig({ temporal: { address: '[::1]:7233' } }).config.temporal.address).toBe('[::1]:7233');
    expect(problemsOf({ temporal: { tls: { client_cert_path: 'c.pem' } } })).toEqual([
      'temporal.tls.client_key_path: is missing (mTLS needs client_cert_path and client_key_path)',
    ]);
  });

  it('refuses a file that is not a mapping', () => {
    expect(problemsOf(['models'])[0]).toMatch(/^config: a list is not a mapping \(sections: models, /);
  });

  it('refuses a DeerFlow alias written beside the key it stands for', () => {
    expect(problemsOf({ sandbox: { bash_command_timeout: 600, bash_timeout_seconds: 60 } })).toEqual([
      'sandbox.bash_command_timeout: and bash_timeout_seconds are the same setting (keep one)',
    ]);
  });
});
