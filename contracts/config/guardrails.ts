/**
 * `guardrails:` in the config file (issue 31), DeerFlow's section as it writes it — `enabled`, `fail_closed`,
 * `provider: {use, config}` — plus this project's `rules:`, `unattended` and `approval_timeout_seconds`; and the
 * same keys as an agent's `guardrails:` override. Each section resolves to one `GuardrailPolicy`
 * (contracts/guardrail-rules.ts). Pure: no Node APIs; worker/config.ts makes a module path absolute.
 */
import { z } from 'zod';
import { GUARDRAIL_DECISIONS } from '../guardrails';
import {
  rulePatternProblem,
  toolGlobProblem,
  UNATTENDED_MODES,
  type GuardrailPolicy,
  type GuardrailRule,
  type UnattendedMode,
} from '../guardrail-rules';
import { bool, listOf, mappingOf, oneOf, seconds, section, text } from './fields';
import { isMapping } from './deerflow';

/** How long an `ask` waits for a person when the config says nothing (an hour). */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 3600;

/** DeerFlow's built-in allowlist, and this project's short names for the built-in providers. */
export const DEERFLOW_ALLOWLIST_PROVIDER = 'deerflow.guardrails.builtin:AllowlistProvider';
const ALLOWLIST_NAMES = [DEERFLOW_ALLOWLIST_PROVIDER, 'allowlist'];
const RULES_NAME = 'rules';

/** The export a module reference names when it names none (`./policy.js` means `./policy.js#provider`). */
export const DEFAULT_PROVIDER_EXPORT = 'provider';

/** `./policy.js#provider` → its parts; undefined when `use` names no module. */
export function parseProviderModule(use: string): { module: string; export: string } | undefined {
  if (ALLOWLIST_NAMES.includes(use) || use === RULES_NAME) return undefined;
  const hash = use.lastIndexOf('#');
  const module = (hash < 0 ? use : use.slice(0, hash)).trim();
  const name = hash < 0 ? DEFAULT_PROVIDER_EXPORT : use.slice(hash + 1).trim();
  if (!module.startsWith('.') && !module.startsWith('/')) return undefined;
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) return undefined;
  return { module, export: name };
}

const toolGlob = z
  .string({
    error: (issue) => (issue.input === undefined ? 'is missing (a tool name or glob)' : 'is not text'),
  })
  .superRefine((glob, ctx) => {
    const problem = toolGlobProblem(glob);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', input: glob, message: problem });
  });

const rulePattern = z.string({ error: 'is not text (a pattern)' }).superRefine((pattern, ctx) => {
  const problem = rulePatternProblem(pattern);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', input: pattern, message: problem });
});

const rule = section('guardrails.rules[]', {
  tool: toolGlob,
  args: mappingOf(rulePattern, 'argument patterns').optional(),
  decision: oneOf(GUARDRAIL_DECISIONS),
  reason: text.optional(),
  id: text.optional(),
});

const allowlistConfig = section('guardrails.provider.config', {
  allowed_tools: listOf(toolGlob, 'tool names or globs').optional(),
  denied_tools: listOf(toolGlob, 'tool names or globs').optional(),
});

const provider = section('guardrails.provider', {
  use: text,
  config: z.unknown().optional(),
});

function fields(defaults: boolean) {
  return {
    enabled: defaults ? bool.default(false) : bool.optional(),
    fail_closed: bool.optional(),
    approval_timeout_seconds: seconds.optional(),
    unattended: oneOf(UNATTENDED_MODES).optional(),
    provider: provider.optional(),
    rules: listOf(rule, 'rules').optional(),
  };
}

type RawSection = z.output<z.ZodObject<ReturnType<typeof fields>>>;
type Ctx = z.core.$RefinementCtx<RawSection>;

/** The section's provider as a policy (without fail_closed and unattended), or undefined when it has none. */
function providerPolicy(
  raw: RawSection,
  ctx: Ctx,
  on: boolean,
): Omit<GuardrailPolicy, 'fail_closed' | 'unattended'> | undefined {
  const issue = (path: (string | number)[], input: unknown, message: string) =>
    ctx.addIssue({ code: 'custom', path, input, message });
  if (raw.provider !== undefined && raw.rules !== undefined && raw.provider.use !== RULES_NAME) {
    // Both may be written while guardrails are off (an example file shows both); on, one must go.
    if (on) issue(['rules'], undefined, `and provider ${raw.provider.use} are two providers (keep one)`);
    return undefined;
  }
  if (raw.provider === undefined || raw.provider.use === RULES_NAME) {
    if (raw.rules === undefined) return undefined;
    return { provider: 'rules', rules: raw.rules.map((r) => ({ ...r }) as GuardrailRule) };
  }
  const { use, config } = raw.provider;
  if (ALLOWLIST_NAMES.includes(use)) {
    const parsed = allowlistConfig.safeParse(config ?? {});
    if (!parsed.success) {
      for (const sub of parsed.error.issues) {
        issue(['provider', 'config', ...(sub.path as (string | number)[])], sub.input, sub.message);
      }
      return undefined;
    }
    return {
      provider: 'allowlist',
      ...(parsed.data.allowed_tools && { allowed_tools: parsed.data.allowed_tools }),
      ...(parsed.data.denied_tools && { denied_tools: parsed.data.denied_tools }),
    };
  }
  const module = parseProviderModule(use);
  if (module === undefined) {
    issue(
      ['provider', 'use'],
      use,
      `is not a provider (${DEERFLOW_ALLOWLIST_PROVIDER}, allowlist, rules, or a module: ./policy.js#provider)`,
    );
    return undefined;
  }
  if (config !== undefined && !isMapping(config)) {
    issue(['provider', 'config'], config, 'is not a mapping');
    return undefined;
  }
  return { provider: 'module', module: module.module, export: module.export };
}

/** The resolved top-level section: the run's policy (absent when off) and the settings every agent inherits. */
export interface GuardrailsSettings {
  enabled: boolean;
  fail_closed: boolean;
  approval_timeout_seconds: number;
  unattended: UnattendedMode;
  /** Present when enabled. */
  policy?: GuardrailPolicy;
}

export const guardrailsSection = section('guardrails', fields(true)).transform(
  (raw, ctx): GuardrailsSettings => {
    const failClosed = raw.fail_closed ?? true;
    const unattended = raw.unattended ?? 'deny';
    const base = providerPolicy(raw, ctx, raw.enabled === true);
    if (raw.enabled === true && base === undefined && raw.provider === undefined && raw.rules === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['provider'],
        input: undefined,
        message: 'is missing (enabled guardrails need a provider or rules)',
      });
    }
    return {
      enabled: raw.enabled === true,
      fail_closed: failClosed,
      approval_timeout_seconds: raw.approval_timeout_seconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS,
      unattended,
      ...(raw.enabled === true && base && { policy: { ...base, fail_closed: failClosed, unattended } }),
    };
  },
);

/**
 * An agent's `guardrails:` before the run's settings are known: its provider or rules replace the run's; what
 * it leaves out (fail_closed, unattended) it inherits. `enabled: false` turns guardrails off for that agent.
 */
export interface AgentGuardrailsOverride {
  enabled?: boolean;
  fail_closed?: boolean;
  unattended?: UnattendedMode;
  policy?: Omit<GuardrailPolicy, 'fail_closed' | 'unattended'>;
}

export function agentGuardrailsSection(where: string) {
  return section(where, fields(false)).transform((raw, ctx): AgentGuardrailsOverride => {
    if (raw.approval_timeout_seconds !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['approval_timeout_seconds'],
        input: raw.approval_timeout_seconds,
        message: 'is set for the whole run (guardrails.approval_timeout_seconds), not per agent',
      });
    }
    const policy = providerPolicy(raw, ctx, raw.enabled !== false);
    if (
      raw.enabled !== false &&
      policy === undefined &&
      raw.provider === undefined &&
      raw.rules === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['provider'],
        input: undefined,
        message: "is missing (an agent's guardrails need a provider or rules, or enabled: false)",
      });
    }
    return {
      ...(raw.enabled !== undefined && { enabled: raw.enabled }),
      ...(raw.fail_closed !== undefined && { fail_closed: raw.fail_closed }),
      ...(raw.unattended !== undefined && { unattended: raw.unattended }),
      ...(policy && { policy }),
    };
  });
}

/** An agent's policy from its override and the run's settings. */
export function agentPolicy(run: GuardrailsSettings, override: AgentGuardrailsOverride): GuardrailPolicy {
  const fail_closed = override.fail_closed ?? run.fail_closed;
  const unattended = override.unattended ?? run.unattended;
  if (override.enabled === false || override.policy === undefined) {
    return { provider: 'none', fail_closed, unattended };
  }
  return { ...override.policy, fail_closed, unattended };
}
