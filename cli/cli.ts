#!/usr/bin/env node
/**
 * `subagents`: the command line. A mistake the user can fix ends with one line on stderr and exit code 2; a
 * run that does not complete, with one line and exit code 1; never a stack trace (DEBUG=1 shows one).
 */
import { ConfigError } from '../contracts/config';
import { CodecServerError } from '../payloads/codec-server';
import { MissingSearchAttributeError } from '../client/search-attribute-errors';
import { TemporalCliNotFoundError } from '../devserver/temporal-cli-builds';
import { ConnectionError } from '../client/connection';
import { CLIENT_COMMANDS, LOCAL_COMMANDS, RUNTIME_FROM_CONFIG } from './command-kinds';
import { UsageError } from './flags';

const USAGE = `Usage: subagents <command> [options]

Commands:
  run "<prompt>"            run a lead agent on the prompt: with --address, on that server by the workers
                            polling it; else by the workers of the server \`subagents dev-server\` runs
                            (a worker of this process there when none polls); else embedded (a dev server
                            and a worker in this process; --embedded: always); --stream: every agent's
                            text as it is written (a subagent's lines behind [its path]), then the usual end
  run --prompt-file FILE    the same, the prompt read from a UTF-8 file (at most 10 MB)
  run -                     the same, the prompt read from stdin (also when no prompt is given and stdin
                            is not a terminal: \`cat task.md | subagents run\`)
  fork <run-id> --turn N [--message TEXT] [--workspace DIR]
                            a new run that keeps the run's first N lead turns (model answers, tool and
                            delegation results read from its history, not asked or billed again) and goes
                            on from turn N + 1, --message added first; its files the run's snapshot at
                            that turn, or DIR (docs/fork.md); printed as run prints a run
  fork <subagent-id> --turn N [--message TEXT] [--workspace DIR]
                            the same for one delegation (<run-id>/task/<task-id>): a subagent run of its
                            own, same agent, tools and scope, from the subagent's turn N + 1
  resume <run-id> [--message TEXT] [--workspace DIR]
                            a failed or timed-out run goes on from its last completed lead turn (a fork
                            there); the original keeps its outcome
  start [--once]            the offline demo (npm start): three subagents in parallel on a sample workspace;
                            keeps the server up for the Web UI until Ctrl-C (--once: exit when done)
  worker [--metrics-port N] a long-running worker (--address, or the running dev server); --metrics-port:
                            its Prometheus endpoint (metrics.port)
  dev-server [--port N] [--ui-port N] [--db-filename F]
                            the Temporal dev server with the Web UI, in the foreground
  serve [--port N] [--host H] [--user-header NAME]
                            the runs' live streams (GET /runs/<run-id>/stream, Server-Sent Events) and a page
                            to watch a run and approve, deny and answer (default port 8090, loopback only;
                            $SUBAGENTS_SERVE_TOKENS: name:token,… who may decide)
  codec-server [--port N]   the Web UI's codec endpoint, which shows payloads kept in the payload store
                            (default port 8081; dev-server and embedded runs serve one themselves)
  status <run-id>           the run's state, turns, tokens and delegations by status; once it ended, how
                            (status, stop reason, error), read without a worker; a subagent's, a batch's or
                            a batch item's id: its own status (every command names the kind of id it gets)
  ledger <run-id>           the run's delegation ledger (a closed run's without a worker)
  events <run-id> [--follow] [--after N]
                            the run's task_* events (--follow: until the run ends); a closed run's are
                            rebuilt from its ledger: task_started and how each delegation ended
  watch <run-id>            follow a run that is going (started elsewhere, or by a schedule) until it ends:
                            the live tree on a terminal, else one line per event; then its summary and
                            ledger (--json: its result alone); exit 0 when it completed. Ctrl-C stops the
                            watching, not the run
  watch <run-id> --tokens [--agent PATH]
                            one agent's text as it is written (the lead's, or PATH: a delegation path such
                            as part0/call_7, or a subagent's id), then a line saying how it ended
  list [--status S] [--stop-reason R] [--user U] [--limit N]
                            recent lead runs, newest first: status, stop reason, tokens, age (--user: that
                            user's only)
  steps <run-id> <task-id> [--follow]
                            a subagent's steps (model turns, tool results); a closed one's from its history;
                            also steps <subagent-id>, steps <batch-id> <key> (its latest attempt)
  report <run-id> [-o FILE] one HTML page of the run (timeline, ledger, every subagent's steps), written to
                            FILE (default report-<run-id>.html here); a closed run's without a worker
  cancel <run-id>           cancel the run and its running subagents
  answer <run-id> "<answer>" [--question REF]
                            answer the question the run waits on (ask_clarification: the lead's, or a
                            subagent's, e.g. --question call_1/q1, as status shows it)
  approve <run-id> [--call REF] [--note TEXT]
                            run a tool call a guardrail holds for approval (ask): the one waiting, or REF
                            as status lists it (a1, or call_1/a1 for a subagent's); several waiting: they
                            are listed (exit 2); none: exit 1; recorded with $USER@host
  deny <run-id> [--call REF] --reason TEXT
                            refuse it: the agent reads the reason as the call's result and goes on
  batch start --items FILE --type AGENT [--description TEXT] [--wait]
                            a durable batch: one subagent per line of FILE (JSONL: {"key", "prompt",
                            "acceptance_criteria"?}); --max-running-items N, --max-live-items N,
                            --max-attempts N; --max-cost-usd N: one USD budget its items share (needs
                            models[].pricing); --wait follows it to the end with a progress line
  batch list [--status S] [--user U] [--limit N]
                            recent batches, newest first: status, items done/failed/total (a closed
                            batch's, from its result), user, the lead run that started it, age; --status
                            one of running, completed, cancelled, failed (it ended with failed items)
  batch status <batch-id>   its counts and a page of items (--offset N, --limit N)
  batch results <batch-id>  one JSON line per item, in key order: key, status, stop_reason, result, error,
                            attempts, token_usage
  batch cancel <batch-id>   cancel its running items; finished ones stay
  schedule create <name> (--every 6h | --cron "0 2 * * *") [--overlap skip] "<prompt>"
                            a lead run on the prompt, started by the server on that schedule (each run its own
                            run id); run's flags apply (--config, --provider, --model, --workspace: default
                            workspace.root/<name>, shared by every run); --every under 60s is refused
                            (SUBAGENTS_SCHEDULE_MIN_SECONDS sets another minimum); --overlap: skip (default),
                            buffer_one, buffer_all, cancel_other, terminate_other, allow_all;
                            --max-cost-usd N: each run's own USD budget (token_budget.max_cost_usd)
  schedule create <name> (--every 6h | --cron "…") --items FILE --type AGENT
                            a batch of those items on that schedule instead (batch start's flags apply)
  schedule list             this project's schedules
  schedule describe <name>  its timing, state, next runs and recent runs with how each went
  schedule pause <name> [--note TEXT], schedule unpause <name>
                            stop taking runs (a running one goes on), and start again
  schedule trigger <name> [--overlap P]
                            one run now, paused or not (by the schedule's overlap policy unless --overlap)
  schedule delete <name>    remove the schedule (runs it started go on to their end)
  mcp list [--json]         connect to the config's MCP servers (mcp_servers, extensions_config) and
                            print each one's state and tools; exit 1 when an enabled one is down (a
                            running worker lists them again on SIGHUP)
  skills list [--user U] [--json]
                            the skill packages in skills.path (public, and user U's custom ones, which
                            shadow public ones of the same name): name, category, enabled, allowed tools,
                            and the packages left out with why (skills list --help)
  memory show|forget <fact-id>|clear [--user U] [--json]
                            a user's memory (memory:): the facts their lead runs stored (id, category,
                            confidence, source run), forget one, or forget them all
  budget [--user U] [--json] the user's spend today (UTC) under budgets.per_user: limits, what is left,
                            when it resets, the runs that spent (default user: lead.user_id, else default)
  ensure-temporal           find or fetch the Temporal CLI (cached) and print its path
  schema lead-input         the JSON Schema of leadRunWorkflow's input, for clients in other languages (a
                            {"prompt"} alone is filled from the worker's config)
  doctor [--check-models]   what this machine has and lacks (Node, Temporal CLI, models, server), with fixes;
                            --check-models reaches each configured model with one tiny call

Options:
  --config FILE             a config.yaml (DeerFlow's keys; see config.example.yaml)
  --provider P, --model NAME
                            the model for the lead and every subagent: a configured model's name alone, or a
                            provider (scripted, openai, anthropic, google, bedrock, azure_openai, ollama) and
                            its model id (openai: OPENAI_BASE_URL, OPENAI_API_KEY; docs/models.md)
  --max-running N           subagents running at once (subagent_runtime.max_running): for run, also the
                            task calls one response may make; for worker, the bound it declares to
                            every run on its task queue
  --max-runs N              worker: lead runs in flight at once on its task queue (lead_runtime.max_running);
                            past it a run waits in the queue, shown as queued by status and the live tree
  --max-total N             delegations per run, 1–50 (subagents.max_total_per_run)
  --fairness-key KEY        runs with one key share one turn at admission (lead.fairness_key;
                            default: each run its own)
  --user ID                 whose run (or batch, or schedule) it is: every delegation carries it, the Web UI
                            filters by it (search attribute UserId); lead.user_id, default: default
  --workspace DIR           the run's workspace (default: workspace.root/<run-id>)
  --secret NAME             run, start, schedule create (repeatable): the environment variable NAME, handed
                            to the run sealed (SUBAGENTS_ENCRYPTION_KEY; an embedded run without a key makes
                            one of its own) for the bash commands of an agent whose active skill declares it
                            (required-secrets), masked in their output
  --address HOST:PORT, --namespace NS, --task-queue Q
                            the Temporal server (else temporal: in the config, TEMPORAL_ADDRESS and
                            the other TEMPORAL_* variables, a temporal.toml profile, or embedded)
  --json                    machine-readable output (run: the LeadRunResult alone on stdout, with
                            ui_url: the run's page in the Web UI, when the server has one)`;

/**
 * Each command's module is loaded when it runs, not before: a client command (`list`, `status`, …) loads
 * @temporalio/client and what it needs, never the worker's side (the SDK's worker and its native library,
 * LangChain, the MCP SDK, OpenTelemetry), which `run`, `start` and `worker` bring in. By `require`: under
 * Node16 modules `import()` stays an ECMAScript import, which needs file extensions, and
 * --experimental-vm-modules under jest.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  run: (args) => (require('./run-command') as typeof import('./run-command')).runCommand(args),
  start: (args) => (require('./run-command') as typeof import('./run-command')).startCommand(args),
  fork: (args) => (require('./fork-command') as typeof import('./fork-command')).forkCommand(args),
  resume: (args) => (require('./resume-command') as typeof import('./resume-command')).resumeCommand(args),
  worker: (args) => (require('./server-commands') as typeof import('./server-commands')).workerCommand(args),
  'dev-server': (args) =>
    (require('./server-commands') as typeof import('./server-commands')).devServerCommand(args),
  'codec-server': (args) =>
    (require('./codec-server-command') as typeof import('./codec-server-command')).codecServerCommand(args),
  status: (args) =>
    (require('./inspect-commands') as typeof import('./inspect-commands')).statusCommand(args),
  ledger: (args) =>
    (require('./inspect-commands') as typeof import('./inspect-commands')).ledgerCommand(args),
  events: (args) =>
    (require('./inspect-commands') as typeof import('./inspect-commands')).eventsCommand(args),
  watch: (args) => (require('./watch-command') as typeof import('./watch-command')).watchCommand(args),
  serve: (args) => (require('./serve-command') as typeof import('./serve-command')).serveCommand(args),
  list: (args) => (require('./list-command') as typeof import('./list-command')).listCommand(args),
  steps: (args) => (require('./steps-command') as typeof import('./steps-command')).stepsCommand(args),
  report: (args) => (require('./report-command') as typeof import('./report-command')).reportCommand(args),
  cancel: (args) =>
    (require('./inspect-commands') as typeof import('./inspect-commands')).cancelCommand(args),
  answer: (args) => (require('./answer-command') as typeof import('./answer-command')).answerCommand(args),
  approve: (args) =>
    (require('./approval-commands') as typeof import('./approval-commands')).approveCommand(args),
  deny: (args) => (require('./approval-commands') as typeof import('./approval-commands')).denyCommand(args),
  batch: (args) => (require('./batch-command') as typeof import('./batch-command')).batchCommand(args),
  schedule: (args) =>
    (require('./schedule-command') as typeof import('./schedule-command')).scheduleCommand(args),
  'ensure-temporal': (args) =>
    (require('./server-commands') as typeof import('./server-commands')).ensureTemporalCommand(args),
  doctor: (args) => (require('./doctor') as typeof import('./doctor')).doctorCommand(args),
  schema: (args) => (require('./schema-command') as typeof import('./schema-command')).schemaCommand(args),
  mcp: (args) => (require('./mcp-command') as typeof import('./mcp-command')).mcpCommand(args),
  skills: (args) => (require('./skills-command') as typeof import('./skills-command')).skillsCommand(args),
  memory: (args) => (require('./memory-command') as typeof import('./memory-command')).memoryCommand(args),
  budget: (args) => (require('./budget-command') as typeof import('./budget-command')).budgetCommand(args),
};
/* eslint-enable @typescript-eslint/no-require-imports */

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const ownHelp = LOCAL_COMMANDS.has(command ?? '');
  if (
    command === undefined ||
    command === '--help' ||
    command === 'help' ||
    (args.includes('--help') && !ownHelp)
  ) {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run)
    throw new UsageError(
      `unknown command ${JSON.stringify(command)} (${Object.keys(COMMANDS).join(', ')}; --help)`,
    );
  // Before any worker or native connection: the SDK's logs, the Rust core's included, go to stderr. `worker`,
  // `run` and `start` install it themselves once their config is read (`metrics:` is served by the runtime).
  if (!RUNTIME_FROM_CONFIG.has(command) && !CLIENT_COMMANDS.has(command) && !LOCAL_COMMANDS.has(command))
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy: a client command never loads it
    (require('../worker/runtime') as typeof import('../worker/runtime')).installRuntime();
  return run(args);
}

/** JavaScript's own errors: a fault in this program, whose message means nothing to a user. */
const PROGRAM_FAULTS = [TypeError, ReferenceError, RangeError, SyntaxError];

/**
 * The errors of this process's encryption keys (payloads/encryption-keys.ts, payloads/encryption-codec.ts), by
 * name: a malformed key, a payload under a key not held, one that does not decrypt. Named, not imported, so a
 * command that never decodes loads none of it.
 */
const KEY_ERRORS: ReadonlySet<string> = new Set([
  'EncryptionKeyError',
  'MissingEncryptionKeyError',
  'PayloadDecryptionError',
]);

/** The key problem behind `err` (it or one of its causes), else undefined. */
function keyProblem(err: unknown): Error | undefined {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (KEY_ERRORS.has(e.name)) return e;
  }
  return undefined;
}

/** The exit code for an error, and the one line that says it. */
export function describeFailure(err: unknown, command = 'subagents'): { code: number; line: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UsageError || err instanceof ConfigError) return { code: 2, line: message };
  const key = keyProblem(err);
  if (key !== undefined) {
    // A malformed key is this command's setup (2); a payload it cannot open is the data's (1).
    const code = key.name === 'EncryptionKeyError' ? 2 : 1;
    return { code, line: `encryption key: ${key.message.split('\n')[0]}` };
  }
  if (
    err instanceof ConnectionError ||
    err instanceof TemporalCliNotFoundError ||
    err instanceof CodecServerError ||
    err instanceof MissingSearchAttributeError
  )
    return { code: 1, line: message };
  if (PROGRAM_FAULTS.some((fault) => err instanceof fault))
    return {
      code: 1,
      line:
        `unexpected error in ${command}: a fault of subagents itself, not of your input or the server; ` +
        'DEBUG=1 shows where (please report it)',
    };
  return { code: 1, line: `unexpected error in ${command}: ${message.split('\n')[0]}` };
}

/** The command on this process's arguments: prints what failed and exits with the command's code. */
export function runAsProgram(): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      const { code, line } = describeFailure(err, process.argv[2]);
      process.stderr.write(`subagents: ${line}\n`);
      if (process.env.DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
      process.exit(code);
    },
  );
}

if (require.main === module) runAsProgram();
