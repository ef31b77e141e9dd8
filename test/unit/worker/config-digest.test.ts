import { parseConfig, type Config } from '../../../contracts/config';
import { configDigestOf } from '../../../contracts/worker-heartbeats';
import {
  configDigest,
  configDigestPlugin,
  digestedEnvNames,
  type ConfigDigestFacts,
} from '../../../worker/config-digest';

const OPENAI_MODEL = { name: 'main', provider: 'openai', model: 'gpt-4o-mini' };

const configOf = (raw: Record<string, unknown>): Config => parseConfig(raw).config;

const facts = (
  env: Record<string, string> = {},
  more: Partial<ConfigDigestFacts> = {},
): ConfigDigestFacts => ({
  env,
  payloadDir: '/cache/payloads',
  encryptionKeyIds: [],
  ...more,
});

describe('configDigest', () => {
  const base = configOf({ models: [OPENAI_MODEL], subagents: { max_total_per_run: 8 } });
  const keyed = facts({ OPENAI_API_KEY: 'sk-one' });
  const digest = configDigest(base, keyed);

  it('is the same for the same config in the same environment, however the file orders its keys', () => {
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    const reordered = configOf({ subagents: { max_total_per_run: 8 }, models: [{ ...OPENAI_MODEL }] });
    expect(configDigest(reordered, facts({ OPENAI_API_KEY: 'sk-one' }))).toBe(digest);
  });

  it('differs for another model, another limit, another tool filter', () => {
    expect(configDigest(configOf({ models: [{ ...OPENAI_MODEL, model: 'gpt-4o' }] }), keyed)).not.toBe(
      digest,
    );
    expect(
      configDigest(configOf({ models: [OPENAI_MODEL], subagents: { max_total_per_run: 9 } }), keyed),
    ).not.toBe(digest);
    const denied = configOf({
      models: [OPENAI_MODEL],
      subagents: { max_total_per_run: 8, agents: { bash: { tools: { deny: ['bash'] } } } },
    });
    expect(configDigest(denied, keyed)).not.toBe(digest);
  });

  it("differs when the model's key is missing or another, and never carries the key", () => {
    expect(configDigest(base, facts())).not.toBe(digest);
    expect(configDigest(base, facts({ OPENAI_API_KEY: 'sk-two' }))).not.toBe(digest);
    // An endpoint the provider reads from the environment counts too.
    expect(
      configDigest(base, facts({ OPENAI_API_KEY: 'sk-one', OPENAI_BASE_URL: 'http://proxy/v1' })),
    ).not.toBe(digest);
    expect(digest).not.toContain('sk-one');
  });

  it("ignores variables the config's providers do not read, and where the worker connects or reports", () => {
    expect(configDigest(base, facts({ OPENAI_API_KEY: 'sk-one', ANTHROPIC_API_KEY: 'x', HOME: '/h' }))).toBe(
      digest,
    );
    const elsewhere = configOf({
      models: [OPENAI_MODEL],
      subagents: { max_total_per_run: 8 },
      temporal: { address: 'temporal.example:7233', task_queue: 'other' },
      metrics: { port: 9464 },
      worker: { max_cached_workflows: 10 },
    });
    expect(configDigest(elsewhere, keyed)).toBe(digest);
  });

  it('differs for another payload folder or other encryption keys', () => {
    expect(configDigest(base, { ...keyed, payloadDir: '/elsewhere' })).not.toBe(digest);
    expect(configDigest(base, { ...keyed, encryptionKeyIds: ['k-2025'] })).not.toBe(digest);
  });

  it("reads a model's own key variable, and the defaults of its provider otherwise", () => {
    const named = configOf({ models: [{ ...OPENAI_MODEL, api_key: '$TEAM_KEY' }] });
    expect(digestedEnvNames(named)).toEqual(['OPENAI_BASE_URL', 'TEAM_KEY']);
    expect(digestedEnvNames(configOf({}))).toEqual([]);
    const google = configOf({ models: [{ name: 'g', provider: 'google', model: 'gemini-2.5-flash' }] });
    expect(digestedEnvNames(google)).toEqual(['GEMINI_API_KEY', 'GOOGLE_API_KEY']);
  });

  it("reads each web tool's key variable: its api_key, else its provider's", () => {
    const tools = configOf({
      tools: [
        { name: 'web_search', use: 'tavily', api_key: '$TEAM_TAVILY' },
        { name: 'web_fetch', use: 'jina_ai' },
        { name: 'image_search', use: 'image_search' },
      ],
    });
    expect(digestedEnvNames(tools)).toEqual(['JINA_API_KEY', 'TEAM_TAVILY']);
  });
});

describe('the digest in a heartbeat', () => {
  it("is read back from the plugin's name, and from no other plugin", () => {
    const plugin = configDigestPlugin('0123456789abcdef');
    expect(configDigestOf(['some-plugin', plugin.name])).toBe('0123456789abcdef');
    expect(configDigestOf(['some-plugin'])).toBeUndefined();
  });
});
