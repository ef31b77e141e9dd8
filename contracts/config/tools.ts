/**
 * DeerFlow's `tools:` and `tool_groups:` sections. Each entry names a tool (DeerFlow's names), the `use:` path of
 * its implementation (DeerFlow's module paths, or the provider's short name), a `group`, and the provider's own
 * keys. Which tools an agent gets follows from the list (contracts/config/agents.ts); the entries themselves
 * (endpoints, `$NAME` key references) stay with the worker that runs the calls and never enter a workflow input.
 */
import { z } from 'zod';
import { TOOL_ACTIVITY_NAMES, type BuiltinToolName } from '../tools';
import { apiKeyReference, bool, CONFIG_KEYS, httpUrl, listOf, seconds, text, wholeNumber } from './fields';
import { typeError } from './value-types';

/** The providers behind each web tool; the first is the default DeerFlow ships. */
export const WEB_PROVIDERS = {
  web_search: ['ddg_search', 'tavily', 'brave', 'serper', 'searxng', 'exa', 'firecrawl'],
  web_fetch: ['jina_ai', 'firecrawl', 'exa', 'direct'],
  image_search: ['image_search', 'serper', 'brave'],
} as const satisfies Record<string, readonly string[]>;

export type WebSearchProvider = (typeof WEB_PROVIDERS.web_search)[number];
export type WebFetchProvider = (typeof WEB_PROVIDERS.web_fetch)[number];
export type ImageSearchProvider = (typeof WEB_PROVIDERS.image_search)[number];

/** The workspace tools' implementation: DeerFlow's sandbox. */
export const SANDBOX_PROVIDER = 'sandbox';

const DEERFLOW_COMMUNITY = /^deerflow\.community\.([a-z0-9_]+)\.tools:([a-z_]+)_tool$/;
const DEERFLOW_SANDBOX = /^deerflow\.sandbox\.tools:([a-z_]+)_tool$/;

/**
 * The provider a `use:` path names for this tool: DeerFlow's path (`deerflow.community.tavily.tools:web_search_tool`,
 * `deerflow.sandbox.tools:grep_tool`) or the provider's short name (`tavily`, `sandbox`); undefined when it
 * names none this project has.
 */
export function toolProvider(name: BuiltinToolName, use: string): string | undefined {
  const providers: readonly string[] =
    name in WEB_PROVIDERS ? WEB_PROVIDERS[name as keyof typeof WEB_PROVIDERS] : [SANDBOX_PROVIDER];
  if (providers.includes(use)) return use;
  const community = DEERFLOW_COMMUNITY.exec(use);
  if (community && community[2] === name && providers.includes(community[1] ?? '')) return community[1];
  const sandbox = DEERFLOW_SANDBOX.exec(use);
  if (sandbox && sandbox[1] === name && providers.includes(SANDBOX_PROVIDER)) return SANDBOX_PROVIDER;
  return undefined;
}

/** What `use:` may say for a tool, for messages. */
function acceptedUses(name: BuiltinToolName): string {
  if (!(name in WEB_PROVIDERS)) return `deerflow.sandbox.tools:${name}_tool`;
  const providers: readonly string[] = WEB_PROVIDERS[name as keyof typeof WEB_PROVIDERS];
  return `deerflow.community.<${providers.join('|')}>.tools:${name}_tool, or the provider's name`;
}

/** DeerFlow keys a provider of ours does not need (an HTTP proxy is the process's own); accepted and unused. */
export const IGNORED_TOOL_KEYS = ['proxy', 'trust_env', 'backend', 'timeout_s'] as const;

// The keys of one entry. Provider keys a provider does not read are harmless: each provider reads its own.
const entryShape = {
  name: z.enum(TOOL_ACTIVITY_NAMES, {
    error: (issue) =>
      issue.input === undefined
        ? `is missing (a tool name: ${TOOL_ACTIVITY_NAMES.join(', ')})`
        : `is not a tool this project has (${TOOL_ACTIVITY_NAMES.join(', ')})`,
  }),
  group: text.optional(),
  use: text,
  api_key: apiKeyReference.optional(),
  base_url: httpUrl.optional(),
  max_results: wholeNumber(1).optional(),
  timeout: seconds.optional(),
  max_chars: wholeNumber(100).optional(),
  allow_private_addresses: bool.optional(),
  search_type: text.optional(),
  contents_max_characters: wholeNumber(1).optional(),
  region: text.optional(),
  safesearch: text.optional(),
  country: text.optional(),
  search_lang: text.optional(),
  spellcheck: bool.optional(),
};
const acceptedKeys = Object.keys(entryShape);
CONFIG_KEYS['tools[]'] = acceptedKeys;

// Strict as a section is (fields.ts: an unknown key's issue carries the accepted keys, so a newer DeerFlow key is
// dropped with a warning and a typo is refused); DeerFlow's keys no provider here needs are accepted and dropped.
const toolEntry = z
  .strictObject(
    { ...entryShape, ...Object.fromEntries(IGNORED_TOOL_KEYS.map((key) => [key, z.unknown().optional()])) },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? acceptedKeys.join(', ')
          : typeError('a mapping', `keys: ${acceptedKeys.join(', ')}`)(issue),
    },
  )
  .transform((entry, ctx) => {
    const { name, use, group, ...rest } = entry;
    const provider = toolProvider(name, use);
    if (provider === undefined) {
      ctx.issues.push({
        code: 'custom',
        path: ['use'],
        input: use,
        message: `is not an implementation of ${name} this project has (${acceptedUses(name)})`,
      });
      return z.NEVER;
    }
    const settings = Object.fromEntries(
      Object.entries(rest).filter(
        ([key, value]) => value !== undefined && !(IGNORED_TOOL_KEYS as readonly string[]).includes(key),
      ),
    ) as ToolProviderSettings;
    return { name, provider, ...(group !== undefined && { group }), ...settings };
  });

/** A provider's own keys, as the config wrote them (`api_key` is the name of its environment variable). */
export interface ToolProviderSettings {
  api_key?: string;
  base_url?: string;
  max_results?: number;
  timeout?: number;
  max_chars?: number;
  allow_private_addresses?: boolean;
  search_type?: string;
  contents_max_characters?: number;
  region?: string;
  safesearch?: string;
  country?: string;
  search_lang?: string;
  spellcheck?: boolean;
}

/** One configured tool, as the worker serves it. */
export interface ToolEntry extends ToolProviderSettings {
  name: BuiltinToolName;
  /** The implementation: a web provider (`tavily`, `jina_ai`, …) or `sandbox`. */
  provider: string;
  group?: string;
}

export const toolsSection = listOf(toolEntry, 'tool entries').superRefine((entries, ctx) => {
  entries.forEach((entry, index) => {
    const first = entries.findIndex((other) => other.name === entry.name);
    if (first !== index) {
      ctx.addIssue({
        code: 'custom',
        path: [index, 'name'],
        input: entry.name,
        message: `is listed twice (tools[${first}] has it; one implementation a tool)`,
      });
    }
  });
});

const toolGroup = z.object({ name: text }, { error: typeError('a mapping', 'keys: name') }).strict();
CONFIG_KEYS['tool_groups[]'] = ['name'];

export const toolGroupsSection = listOf(toolGroup, 'tool groups');

/** The tools a `tools:` section offers, in the order the model is shown them; absent section: undefined. */
export function configuredToolNames(entries: readonly ToolEntry[] | undefined): string[] | undefined {
  if (entries === undefined) return undefined;
  return TOOL_ACTIVITY_NAMES.filter((name) => entries.some((entry) => entry.name === name));
}

/** The variable each keyed provider reads its key from when the entry names none (DeerFlow's). */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<string, string>> = {
  tavily: 'TAVILY_API_KEY',
  brave: 'BRAVE_SEARCH_API_KEY',
  serper: 'SERPER_API_KEY',
  exa: 'EXA_API_KEY',
  firecrawl: 'FIRECRAWL_API_KEY',
  jina_ai: 'JINA_API_KEY',
};

/** The variable an entry's key is read from (its `api_key`, else its provider's), or undefined: no key. */
export function keyVariable(entry: ToolEntry): string | undefined {
  return entry.api_key ?? PROVIDER_KEY_VARIABLES[entry.provider];
}

/** The configured tools in these groups (DeerFlow's `tool_groups` filter on an agent). */
export function toolsInGroups(entries: readonly ToolEntry[], groups: readonly string[]): string[] {
  return entries
    .filter((entry) => entry.group !== undefined && groups.includes(entry.group))
    .map((entry) => entry.name);
}
