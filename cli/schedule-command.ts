/**
 * `subagents schedule create|list|describe|pause|unpause|trigger|delete`: scheduled lead runs, kept and
 * started by the server (see schedules.ts). Every check of `create` runs before the server is asked.
 */
import type { Config } from '../contracts/config';
import { withMaxCostUsd } from './batch-cost-flag';
import type { LeadRunInput } from '../contracts/lead';
import { buildLeadRunInput } from '../contracts/config/lead-input';
import { loadCommandConfig, requireServer, runWorkspace } from './command-setup';
import { withSecrets } from '../client/api';
import { connectClient } from '../client/connection';
import { processSecretsKeyring } from '../payloads/secrets';
import {
  parseFlags,
  PROMPT_FLAGS,
  RUN_FLAGS,
  secretFlags,
  stringFlag,
  UsageError,
  type FlagSpec,
  type FlagValues,
} from './flags';
import { readPromptFile } from './prompt-input';
import { BATCH_FLAGS, batchFromFlags } from './batch-command';
import {
  InvalidScheduleError,
  OVERLAP_POLICIES,
  occurrenceIdBase,
  scheduleNameProblem,
  ScheduleExistsError,
  SubagentsSchedules,
  UnknownScheduleError,
  type OverlapPolicy,
  type ScheduleAction,
  type ScheduleListEntry,
  type ScheduleRunView,
  type ScheduleTiming,
  type ScheduleView,
} from '../client/schedules';
import { existingSkillsRoot } from '../client/config';

/** The shortest `--every` the CLI takes unless SUBAGENTS_SCHEDULE_MIN_SECONDS sets another. */
export const DEFAULT_MIN_INTERVAL_SECONDS = 60;
export const MIN_INTERVAL_ENV = 'SUBAGENTS_SCHEDULE_MIN_SECONDS';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `30m`, `6h`, `1d`, `1h30m` → seconds; anything else is a UsageError naming what is accepted. */
export function parseEvery(text: string): number {
  const trimmed = text.trim();
  const accepted = 'give a number with a unit s, m, h or d: 90s, 30m, 6h, 1h30m';
  if (!/^(\d+[smhd])+$/.test(trimmed))
    throw new UsageError(`--every: ${JSON.stringify(text)} is not a duration (${accepted})`);
  let seconds = 0;
  for (const [, count, unit] of trimmed.matchAll(/(\d+)([smhd])/g))
    seconds += Number(count) * UNIT_SECONDS[unit];
  if (!Number.isSafeInteger(seconds) || seconds < 1)
    throw new UsageError(`--every: ${JSON.stringify(text)} is not a duration of at least 1s (${accepted})`);
  return seconds;
}

/** `3600` → `1h`, `5400` → `1h30m`: as `--every` takes it. */
export function formatEvery(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of Object.entries(UNIT_SECONDS).reverse()) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || '0s';
}

/** The shortest interval `create` accepts: SUBAGENTS_SCHEDULE_MIN_SECONDS (a whole number ≥ 1), else 60. */
export function minimumIntervalSeconds(env: NodeJS.ProcessEnv): number {
  const raw = env[MIN_INTERVAL_ENV];
  if (raw === undefined || raw === '') return DEFAULT_MIN_INTERVAL_SECONDS;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1)
    throw new UsageError(`${MIN_INTERVAL_ENV}: ${JSON.stringify(raw)} is not a whole number of seconds ≥ 1`);
  return Number(raw);
}

/** The timing `--every` or `--cron` give (one of them, exactly). */
export function scheduleTiming(values: FlagValues, env: NodeJS.ProcessEnv): ScheduleTiming {
  const every = stringFlag(values, 'every');
  const cron = stringFlag(values, 'cron');
  if ((every === undefined) === (cron === undefined))
    throw new UsageError(
      'schedule create: give one of --every <duration> (e.g. --every 6h) or --cron "<expr>" (e.g. --cron "0 2 * * *")',
    );
  if (cron !== undefined) {
    if (cron.trim() === '') throw new UsageError('--cron: the expression is empty (e.g. --cron "0 2 * * *")');
    return { kind: 'cron', expression: cron };
  }
  const seconds = parseEvery(every ?? '');
  const minimum = minimumIntervalSeconds(env);
  if (seconds < minimum)
    throw new UsageError(
      `--every: ${every} is under the minimum interval of ${formatEvery(minimum)} ` +
        `(a scheduled run every few seconds is rarely meant; ${MIN_INTERVAL_ENV} sets another minimum)`,
    );
  return { kind: 'every', seconds };
}

function overlapFlag(values: FlagValues): OverlapPolicy | undefined {
  const raw = stringFlag(values, 'overlap');
  if (raw === undefined) return undefined;
  const policy = OVERLAP_POLICIES.find((name) => name === raw.trim().toLowerCase().replace(/-/g, '_'));
  if (policy === undefined)
    throw new UsageError(
      `--overlap: ${JSON.stringify(raw)} is not a policy (${OVERLAP_POLICIES.join(', ')})`,
    );
  return policy;
}

function requireName(command: string, name: string | undefined): string {
  if (name === undefined)
    throw new UsageError(`${command}: give the schedule's name: subagents ${command} <name>`);
  const problem = scheduleNameProblem(name);
  if (problem !== undefined)
    throw new UsageError(`${command}: schedule name ${JSON.stringify(name)} ${problem}`);
  return name;
}

export function describeTiming(timing: ScheduleTiming | undefined): string {
  if (timing === undefined) return 'set elsewhere';
  return timing.kind === 'every' ? `every ${formatEvery(timing.seconds)}` : `cron "${timing.expression}"`;
}

const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);
const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function scheduleLines(view: ScheduleView): string[] {
  const action =
    view.action.kind === 'lead'
      ? [
          `  lead run: ${JSON.stringify(view.action.prompt.slice(0, 200))}`,
          `  workspace: ${view.action.workspace}`,
        ]
      : view.action.kind === 'batch'
        ? [
            `  batch: ${view.action.items} items, ${view.action.subagent_type}: ${view.action.description}`,
            `  workspace: ${view.action.workspace}`,
          ]
        : [`  action: workflow ${view.action.workflow_type}`];
  const runs = view.recent_runs.map((run) => `    ${run.run_id}  ${runText(run)}`);
  const batches = view.recent_runs.some((run) => run.kind === 'batch');
  const leads = view.recent_runs.some((run) => run.kind !== 'batch');
  return [
    `Schedule ${view.name} (${view.schedule_id}): ${describeTiming(view.timing)}, overlap ${view.overlap}, ` +
      `${view.paused ? 'paused' : 'active'}${view.note ? ` — ${view.note}` : ''}`,
    ...action,
    `  task queue: ${view.task_queue}`,
    `  next runs: ${view.paused ? 'none while paused' : view.next_runs.slice(0, 3).join(', ') || 'none'}`,
    `  runs taken: ${view.actions_taken}, skipped for overlap: ${view.skipped_for_overlap}` +
      (view.running.length > 0 ? `, running now: ${view.running.join(', ')}` : ''),
    ...(runs.length > 0 ? ['  recent runs (oldest first):', ...runs] : ['  recent runs: none yet']),
    ...(batches
      ? ["  a batch's items: subagents batch status <id>; their results: subagents batch results <id>"]
      : []),
    ...(leads && runs.length > 0 ? ['  a lead run: subagents status <id>, subagents report <id>'] : []),
  ];
}

/** An occurrence in a few words: `batch, completed: 2 of 3 items completed, 1 failed`, `completed (lead run failed)`. */
export function runText(run: ScheduleRunView): string {
  if (run.kind === 'batch') {
    const items = run.items;
    const counted = items
      ? `: ${items.completed} of ${items.total} items completed` +
        (items.failed > 0 ? `, ${items.failed} failed` : '') +
        (items.cancelled > 0 ? `, ${items.cancelled} cancelled` : '')
      : '';
    const how = run.outcome && run.outcome !== run.workflow_status ? ` (batch ${run.outcome})` : '';
    return `batch, ${run.workflow_status}${how}${counted}`;
  }
  return `${run.workflow_status}${run.outcome && run.outcome !== run.workflow_status ? ` (lead run ${run.outcome})` : ''}`;
}

function listLines(entries: ScheduleListEntry[]): string[] {
  if (entries.length === 0) return ['No schedules.'];
  return entries.map(
    (entry) =>
      `${entry.name}  ${entry.paused ? 'paused' : 'active'}  ${describeTiming(entry.timing)}  ` +
      `next ${entry.paused ? '-' : (entry.next_run ?? '-')}  last ${entry.last_run?.run_id ?? '-'}`,
  );
}

/** The lead run's input every occurrence gets, built as `subagents run` builds one; its workspace is made. */
function leadInput(config: Config, values: FlagValues, name: string, positionals: string[]) {
  const promptFile = stringFlag(values, 'prompt-file');
  if (positionals.length > 1 || (promptFile !== undefined && positionals.length > 0))
    throw new UsageError(
      'schedule create: give the prompt one way only: one argument in quotes, or --prompt-file FILE',
    );
  let prompt: string;
  if (promptFile !== undefined) prompt = readPromptFile(promptFile);
  else {
    const [argument] = positionals;
    if (argument === undefined || argument.trim() === '')
      throw new UsageError(
        'schedule create: give the prompt as one argument, in quotes: subagents schedule create <name> --every 6h "<prompt>"; or --prompt-file FILE',
      );
    prompt = argument;
  }
  // The folder `run` would make for a run id, made for the schedule's name: every occurrence works there.
  const input = buildLeadRunInput(config, {
    prompt,
    workspace: runWorkspace(config, values, name),
    skills_root: existingSkillsRoot(config),
  });
  // Nobody follows a scheduled run: a guardrail's `ask` is settled at once by `guardrails.unattended`, for the
  // run and everything it delegates, rather than held for an hour nobody watches.
  const { guardrails } = input.scope;
  return guardrails === undefined
    ? input
    : { ...input, scope: { ...input.scope, guardrails: { ...guardrails, no_approver: true as const } } };
}

const CREATE_FLAGS: FlagSpec = {
  ...RUN_FLAGS,
  ...PROMPT_FLAGS,
  ...BATCH_FLAGS,
  every: { type: 'string' },
  cron: { type: 'string' },
  overlap: { type: 'string' },
};

/**
 * A scheduled run's input with the --secret values sealed in: the schedule keeps them sealed in its action, and
 * every occurrence carries them. Its workers are other processes, and later ones: the key must be one they
 * hold (no process key of this command's own would do).
 */
function scheduledSecrets(
  input: LeadRunInput,
  secrets: Record<string, string> | undefined,
  config: Config,
): LeadRunInput {
  if (secrets === undefined) return input;
  const keyring = processSecretsKeyring(config.payloads.encryption);
  if (keyring.keyId === undefined) {
    throw new UsageError(
      `schedule create: --secret needs an encryption key shared by this command and the workers, and none ` +
        `is configured: set ${config.payloads.encryption.key_env} (or payloads.encryption's key_file or ` +
        'key_command) for both (`openssl rand -base64 32` makes a key)',
    );
  }
  return withSecrets(input, secrets, keyring);
}

/**
 * Connects to the server the flags, config or environment name (or the running dev server) and runs `body`;
 * a schedule the server does not know, or refuses, ends as one line (exit 2).
 */
async function withSchedules(
  command: string,
  name: string,
  config: Config,
  env: NodeJS.ProcessEnv,
  body: (schedules: SubagentsSchedules, address: string) => Promise<number>,
): Promise<number> {
  const settings = await requireServer(command, config, env);
  const { client, connection } = await connectClient(settings);
  try {
    return await body(new SubagentsSchedules(client, settings.namespace), settings.address);
  } catch (err) {
    if (err instanceof UnknownScheduleError)
      throw new UsageError(
        `${command}: no schedule ${JSON.stringify(name)} on ${settings.address} (subagents schedule list)`,
      );
    if (err instanceof ScheduleExistsError || err instanceof InvalidScheduleError)
      throw new UsageError(`${command}: ${err.message}`);
    throw err;
  } finally {
    await connection.close();
  }
}

async function createCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const command = 'schedule create';
  const { values, positionals } = parseFlags(args, CREATE_FLAGS, command);
  const [nameArgument, ...prompt] = positionals;
  const name = requireName(command, nameArgument);
  // Every mistake is refused before a server is asked; the workspace folder is made last.
  const timing = scheduleTiming(values, env);
  const overlap = overlapFlag(values) ?? 'skip';
  const config = loadCommandConfig(values, env);
  const taskQueue = config.temporal.task_queue;
  const secrets = secretFlags(values, env);
  // With --items, each occurrence is a batch of those items (checked whole now); else a lead run.
  let action: ScheduleAction;
  if (stringFlag(values, 'items') !== undefined) {
    if (prompt.length > 0 || stringFlag(values, 'prompt-file') !== undefined)
      throw new UsageError(`${command}: give --items for a batch or a prompt for a lead run, not both`);
    if (secrets !== undefined)
      throw new UsageError(`${command}: --secret is for a scheduled lead run; a batch's items take none`);
    const batch = batchFromFlags(command, values, config);
    action = { kind: 'batch', input: batch.build(runWorkspace(config, values, name)) };
  } else {
    action = {
      kind: 'lead',
      // Each occurrence is a run of its own, with a budget of its own.
      input: scheduledSecrets(
        leadInput(withMaxCostUsd(command, values, config), values, name, prompt),
        secrets,
        config,
      ),
    };
  }
  // The same minimum holds for a cron (a seconds field, `@every 1s`), as the server matches it.
  const minimum = minimumIntervalSeconds(env);
  return withSchedules(command, name, config, env, async (schedules, address) => {
    const view = await schedules
      .create({ name, timing, overlap, action, taskQueue, minimumIntervalSeconds: minimum })
      .catch((err: unknown) => {
        if (err instanceof InvalidScheduleError && err.message.includes('under the minimum interval'))
          throw new InvalidScheduleError(`${err.message}; ${MIN_INTERVAL_ENV} sets another minimum`);
        throw err;
      });
    if (values.json === true) json(view);
    else
      out([
        ...scheduleLines(view),
        `Created. Each run's id is ${occurrenceIdBase(name)}-<time it was due>; a worker must poll task ` +
          `queue "${taskQueue}" on ${address} (subagents worker --address ${address}).`,
      ]);
    return 0;
  });
}

/** What a subcommand answers: the value `--json` prints, and the lines a person reads instead. */
interface Answer {
  value: unknown;
  lines: string[];
}

interface Subcommand {
  flags: FlagSpec;
  /** Takes a schedule name (all but list). */
  named: boolean;
  run(schedules: SubagentsSchedules, name: string, values: FlagValues): Promise<Answer>;
}

const viewAnswer = (view: ScheduleView, lines: string[]): Answer => ({ value: view, lines });

/** The subcommands besides create. */
const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = {
  list: {
    flags: {},
    named: false,
    run: async (schedules) => {
      const entries = await schedules.list();
      return { value: entries, lines: listLines(entries) };
    },
  },
  describe: {
    flags: {},
    named: true,
    run: async (schedules, name) => {
      const view = await schedules.describe(name);
      return viewAnswer(view, scheduleLines(view));
    },
  },
  pause: {
    flags: { note: { type: 'string' } },
    named: true,
    run: async (schedules, name, values) => {
      await schedules.pause(name, stringFlag(values, 'note'));
      const view = await schedules.describe(name);
      return viewAnswer(view, [`Schedule ${name}: paused${view.note ? ` — ${view.note}` : ''}`]);
    },
  },
  unpause: {
    flags: { note: { type: 'string' } },
    named: true,
    run: async (schedules, name, values) => {
      await schedules.unpause(name, stringFlag(values, 'note'));
      const view = await schedules.describe(name);
      return viewAnswer(view, [`Schedule ${name}: active; next run ${view.next_runs[0] ?? 'none'}`]);
    },
  },
  trigger: {
    flags: { overlap: { type: 'string' } },
    named: true,
    run: async (schedules, name, values) => {
      const before = await schedules.describe(name);
      const overlap = overlapFlag(values) ?? before.overlap;
      await schedules.trigger(name, overlap);
      const skipped = overlap === 'skip' && before.running.length > 0;
      return {
        value: { name, triggered_at: new Date().toISOString(), overlap, running: before.running },
        lines: [
          skipped
            ? `Schedule ${name}: triggered, but ${before.running.join(', ')} is still running and the overlap ` +
              'policy is skip, so nothing starts (--overlap allow_all starts a run anyway)'
            : `Schedule ${name}: triggered (overlap ${overlap}); subagents schedule describe ${name} shows the run`,
        ],
      };
    },
  },
  delete: {
    flags: {},
    named: true,
    run: async (schedules, name) => {
      await schedules.delete(name);
      return {
        value: { name, deleted: true },
        lines: [`Schedule ${name}: deleted (runs it started go on to their end)`],
      };
    },
  },
};

export const SCHEDULE_SUBCOMMANDS = ['create', ...Object.keys(SUBCOMMANDS)];

export async function scheduleCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') return createCommand(rest, env);
  const subcommand = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (sub === undefined || subcommand === undefined)
    throw new UsageError(
      `schedule: ${sub === undefined ? 'give a subcommand' : `unknown subcommand ${JSON.stringify(sub)}`} ` +
        `(${SCHEDULE_SUBCOMMANDS.join(', ')}; --help)`,
    );
  const command = `schedule ${sub}`;
  const { values, positionals } = parseFlags(rest, subcommand.flags, command);
  const expected = subcommand.named ? 1 : 0;
  if (positionals.length > expected)
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(positionals[expected])}`);
  const name = subcommand.named ? requireName(command, positionals[0]) : '';
  if (sub === 'trigger') overlapFlag(values);
  const config = loadCommandConfig(values, env);
  return withSchedules(command, name, config, env, async (schedules) => {
    const answer = await subcommand.run(schedules, name, values);
    if (values.json === true) json(answer.value);
    else out(answer.lines);
    return 0;
  });
}
