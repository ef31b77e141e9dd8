/**
 * `subagents run` and `subagents start` (the demo behind `npm start`): one lead run, started, followed and
 * printed, wherever its session (run-session.ts) puts it.
 */
import { cpSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../contracts/config';
import type { LeadRunInput, LeadRunResult } from '../contracts/lead';
import type { SandboxInUse } from '../worker/diagnostics';
import { buildLeadRunInput } from '../contracts/config/lead-input';
import { processSecretsKeyring, useEphemeralSecretsKey } from '../payloads/secrets';
import { configurePayloads } from '../payloads/store';
import { configureStreamBridge } from '../payloads/stream/bridge';
import { signalExitCode } from '../worker/shutdown';
import {
  ForkRefusedError,
  newRunId,
  SubagentsClient,
  workflowUiUrl,
  type RunHandle,
  type SubagentForkHandle,
} from '../client/api';
import { forkableKind } from '../client/fork';
import { forkedSubagentLines } from './fork-lines';
import type { Client } from '@temporalio/client';
import { connectClient, connectionSettings } from '../client/connection';
import { loadCommandConfig, runWorkspace } from './command-setup';
import {
  parseFlags,
  PROMPT_FLAGS,
  RUN_FLAGS,
  secretFlags,
  stringFlag,
  UsageError,
  type FlagValues,
} from './flags';
import { watchRun } from './progress';
import { TreeTextPrinter } from './stream-printing';
import { resolvePrompt } from './prompt-input';
import { cancelledRunLine, RunInterrupts } from './run-interrupts';
import { openSession, type Session } from './run-session';
import { renderLedgerTable, renderSummary } from './tree';
import { installRuntime } from '../worker/runtime';
import { existingSkillsRoot } from '../client/config';

/** Shipped beside the code: dist/cli/run-command.js → <package>/cli/demo. */
export const DEMO_DIR = resolve(__dirname, '..', '..', 'cli', 'demo');

export const DEMO_PROMPT =
  'Review the sample warehouse workspace: which items must be reordered and from whom, how the incidents ' +
  'spread over the warehouses, and which supplier is slowest. Give one short report.';

const say = (line: string) => process.stderr.write(`${line}\n`);

export interface RunRequest {
  prompt: string;
  config: Config;
  values: FlagValues;
  env?: NodeJS.ProcessEnv;
  /** Copied into the run's workspace first (the demo's sample). */
  sampleDir?: string;
  /**
   * Keep the server up after the run for the Web UI, with this command's worker (the UI's queries need one),
   * until Ctrl-C; an embedded server this command starts is recorded as `subagents dev-server` records its own.
   */
  keepServerUp?: boolean;
  /**
   * Without an address: the recorded dev server's workers run the run when one polls its task queue there
   * (`run`; `--embedded` in `values` asks for a server and a worker of this command's own instead).
   */
  useServerWorkers?: boolean;
  /** `fork` / `resume`: a fork of this run instead of a run of `prompt` (docs/fork.md). */
  fork?: RunFork;
}

/** What `fork` and `resume` ask for: the run, the lead turn kept (absent: a resume), a message, a folder. */
export interface RunFork {
  fromRunId: string;
  turn?: number;
  message?: string;
  workspace?: string;
}

/** What the run header says: the run, its workspace, its page in the Web UI. */
export interface RunHeader {
  runId: string;
  workspace: string;
  uiUrl?: string;
  /** The sandbox `bash` runs in, when this process runs the worker. */
  sandbox?: SandboxInUse;
}

/**
 * The run header, printed once when the run has started: on stdout before the live tree or the event lines,
 * on stderr with --json (stdout then carries the result alone).
 */
export function runHeaderLines(header: RunHeader, options: { withUiUrl: boolean }): string[] {
  return [
    `Run ${header.runId} · workspace ${header.workspace}`,
    ...(header.sandbox ? [`bash sandbox: ${header.sandbox.description}`] : []),
    ...(header.uiUrl && options.withUiUrl ? [`Web UI: ${header.uiUrl}`] : []),
  ];
}

/**
 * `--secret` without an encryption key: sealed values only this process can open. On a server given by
 * address, whose workers are other processes, that cannot work: refused. Otherwise the run gets a dev server
 * and a worker of this command's own (never the recorded dev server's workers, nor a task queue they poll),
 * and this process a key of its own for the secrets alone (payloads stay as configured). True: own server.
 */
export function ownServerForSecrets(address: string | undefined, keyEnv: string): true {
  if (address) {
    throw new UsageError(
      `--secret needs an encryption key shared by this command and the workers of ${address}, and none is ` +
        `configured: set ${keyEnv} (or payloads.encryption's key_file or key_command) for both ` +
        '(`openssl rand -base64 32` makes a key)',
    );
  }
  useEphemeralSecretsKey();
  say(
    `--secret without an encryption key: this run gets a dev server and a worker of this command's own, and ` +
      `its secrets a key of this process's own (set ${keyEnv} for this command and the workers to run it ` +
      'on a shared server)',
  );
  return true;
}

/** How the followed run ended: with its result, or this command stopped following it (a server elsewhere). */
type Followed<R = LeadRunResult> =
  { result: R; cancelledBy?: NodeJS.Signals } | { detachedBy: NodeJS.Signals };

/**
 * Runs one lead run to its end and prints it; the exit code: 0 when it completed, 1 when it did not. The
 * first SIGINT or SIGTERM (exit code 130 or 143) cancels a run this command's worker runs and waits for it to
 * end, or stops following a run that other workers run (it goes on there); a second one exits at once.
 */
export async function executeRun(request: RunRequest): Promise<number> {
  const { config, values } = request;
  const env = request.env ?? process.env;
  const settings = connectionSettings(config.temporal, env);
  let ownServer = values.embedded === true;
  if (ownServer && settings.address) {
    throw new UsageError(
      `--embedded starts a server of this command's own, but one is given (${settings.address}: --address, ` +
        'temporal.address, TEMPORAL_ADDRESS or a Temporal profile); give one or the other',
    );
  }
  // Before anything is made: a missing variable or key ends the command as it is.
  const secrets = secretFlags(values, env);
  if (secrets && processSecretsKeyring(config.payloads.encryption).keyId === undefined) {
    ownServer = ownServerForSecrets(settings.address, config.payloads.encryption.key_env);
  }
  const runId = newRunId();
  const { fork } = request;
  const workspace = fork
    ? (fork.workspace ?? `the snapshot of ${fork.fromRunId}, restored beside its folder`)
    : runWorkspace(config, values, runId);
  if (request.sampleDir) cpSync(request.sampleDir, workspace, { recursive: true });
  const input = fork
    ? undefined
    : buildLeadRunInput(config, {
        prompt: request.prompt,
        workspace,
        run_id: runId,
        skills_root: existingSkillsRoot(config),
      });
  configurePayloads(config.payloads);
  configureStreamBridge(config.stream_bridge);
  // Before any native connection: the SDK's logs to stderr, and the config's `metrics:` endpoint (the embedded
  // worker's, as a `subagents worker`'s).
  installRuntime(undefined, { metrics: config.metrics });

  // From before any server starts: an embedded one runs in a process group of its own, stopped by this one.
  const interrupts = new RunInterrupts(say);
  const stoppedEarly = (signal: NodeJS.Signals) => {
    say(`subagents: ${signal}: stopped before run ${runId} started`);
    return signalExitCode(signal);
  };
  interrupts.during((signal) => say(`${signal}: stopping before the run starts`));
  try {
    const session = await openSession(config, settings, env, {
      runId,
      configFile: stringFlag(values, 'config'),
      recordServer: request.keepServerUp === true,
      useServerWorkers: request.useServerWorkers === true,
      ownServer,
    });
    try {
      if (interrupts.signal) return stoppedEarly(interrupts.signal);
      const { client, connection } = await connectClient(session.settings);
      try {
        const api = new SubagentsClient(client, session.settings.namespace);
        const uiUrl = workflowUiUrl(session.uiUrl, session.settings.namespace, runId);
        const tty = process.stdout.isTTY === true;
        const color = tty && !env.NO_COLOR;
        return await session.withWorker(() =>
          startFollowAndPrint(
            request,
            { session, client, api, interrupts, stoppedEarly },
            {
              runId,
              input,
              workspace,
              ...(secrets && { secrets }),
              tty,
              color,
              ...(uiUrl && { uiUrl }),
            },
          ),
        );
      } finally {
        await connection.close();
      }
    } finally {
      await session.close();
    }
  } finally {
    interrupts.dispose();
  }
}

/** What a run started in a session is followed with. */
interface RunContext {
  session: Session;
  client: Client;
  api: SubagentsClient;
  interrupts: RunInterrupts;
  stoppedEarly: (signal: NodeJS.Signals) => number;
}

/**
 * Inside the session's worker: starts the run, prints its header, follows it to its end (or until a signal
 * detaches this command) and prints its result; the command's exit code.
 */
async function startFollowAndPrint(
  request: RunRequest,
  { session, client, api, interrupts, stoppedEarly }: RunContext,
  run: {
    runId: string;
    /** Absent: a fork (`request.fork`). */
    input?: LeadRunInput;
    workspace: string;
    secrets?: Record<string, string>;
    tty: boolean;
    color: boolean;
    uiUrl?: string;
  },
): Promise<number> {
  const { runId, input, workspace, secrets, tty, color, uiUrl } = run;
  const json = request.values.json === true;
  if (interrupts.signal) return stoppedEarly(interrupts.signal);
  const taskQueue = session.settings.taskQueue;
  const started: Started = input
    ? {
        kind: 'lead',
        handle: await api.startRun(input, {
          taskQueue,
          runId,
          onRetry: (line) => process.stderr.write(`subagents: ${line}\n`),
          ...(secrets && { secrets }),
        }),
      }
    : await startFork(api, request, runId, taskQueue);
  // The live tree carries the link itself; logs and --json get it up front.
  const sandbox = await session.sandbox();
  const header = runHeaderLines(
    { runId, workspace, uiUrl, ...(sandbox && { sandbox }) },
    { withUiUrl: json || !tty },
  );
  if (json) say(header.join('\n'));
  else process.stdout.write(`${header.join('\n')}\n\n`);

  if (started.kind === 'subagent')
    return followAndPrintSubagentFork(
      started.handle,
      { session, client, api, interrupts, stoppedEarly },
      json,
    );
  const { handle } = started;
  const followed = await followRun(handle, session, interrupts, () => {
    const stopWatching = session.watchWorkers(client);
    let following: Promise<LeadRunResult>;
    if (request.values.stream === true) {
      // The agents' text as it comes; with --json on stderr, so stdout carries the result alone.
      const out = json ? process.stderr : process.stdout;
      following = printStream(
        handle,
        new TreeTextPrinter((text) => out.write(text), runId, session.reachFlags),
      );
    } else if (json) following = handle.result();
    else
      following = watchRun(handle, {
        out: process.stdout,
        live: tty,
        color,
        ...(uiUrl && { uiUrl }),
        ...(session.reachFlags && { answerFlags: session.reachFlags }),
        childUiUrl: (id) => workflowUiUrl(session.uiUrl, session.settings.namespace, id),
        stream: (signal) => handle.stream({ signal }),
      });
    return following.finally(stopWatching);
  });
  if ('detachedBy' in followed) return detachedExit(session, runId, followed.detachedBy);
  const { result } = followed;
  interrupts.during(() => undefined);
  if (json) {
    // The result, and the run's page in the Web UI as the header shows it (`status --json` has it too).
    const output = { ...result, ...(uiUrl && { ui_url: uiUrl }) };
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } else {
    process.stdout.write(
      `\n${renderSummary(result, { color, ...(uiUrl && { ui_url: uiUrl }) }).join('\n')}\n`,
    );
    process.stdout.write(`\nLedger:\n${renderLedgerTable(result.ledger, { color }).join('\n')}\n`);
  }
  if (followed.cancelledBy) {
    say(cancelledRunLine(result));
    return signalExitCode(followed.cancelledBy);
  }
  if (request.keepServerUp && session.uiUrl && !json) {
    // The worker keeps polling meanwhile: the Web UI's queries of the run need one.
    say(`\nThe server stays up for the Web UI: ${uiUrl ?? session.uiUrl} (Ctrl-C to stop).`);
    await interrupts.first();
  }
  if (result.status !== 'completed') {
    say(`subagents: run ${runId} ended ${result.status}${result.error ? `: ${result.error}` : ''}`);
    return 1;
  }
  return 0;
}

/**
 * `run --stream`: prints the run's live stream until it ends, then its result. A stream that fails (its
 * bridge unreachable) is said once; the run is followed to its end without it.
 */
async function printStream(handle: RunHandle, printer: TreeTextPrinter): Promise<LeadRunResult> {
  try {
    for await (const { event } of handle.stream()) printer.add(event);
  } catch (err) {
    say(
      `subagents: the live stream failed (${err instanceof Error ? err.message : String(err)}); following the run without it`,
    );
  }
  printer.finish();
  return handle.result();
}

/** The exit of a command that stopped following its run (a server elsewhere runs it on), saying where it is. */
function detachedExit(session: Session, runId: string, signal: NodeJS.Signals): number {
  const [where, ...hints] = session.leftBehind(runId, false);
  say(`subagents: ${signal}: stopped following run ${runId}; ${where}`);
  for (const line of hints) say(line);
  return signalExitCode(signal);
}

/** A started run: a lead run (a lead run's fork too), or a subagent's fork, a run of its own. */
type Started = { kind: 'lead'; handle: RunHandle } | { kind: 'subagent'; handle: SubagentForkHandle };

/**
 * A fork's start (`fork`, `resume`), on the session's task queue: its worker runs it. The id names a lead run or
 * a subagent (told by its workflow's type); any other is refused, saying what it names.
 */
async function startFork(
  api: SubagentsClient,
  request: RunRequest,
  runId: string,
  taskQueue: string,
): Promise<Started> {
  const fork = request.fork;
  if (!fork) throw new Error('startFork: no fork asked for');
  const command = fork.turn === undefined ? 'resume' : 'fork';
  const options = {
    runId,
    taskQueue,
    ...(fork.message !== undefined && { message: fork.message }),
    ...(fork.workspace !== undefined && { workspace: fork.workspace }),
  };
  try {
    const { kind } = await forkableKind(api.client.workflow, fork.fromRunId);
    if (kind === 'lead') {
      const turn = fork.turn !== undefined ? { turn: fork.turn } : {};
      return { kind, handle: await api.getRun(fork.fromRunId).fork({ ...options, ...turn }) };
    }
    if (fork.turn === undefined)
      throw new UsageError(
        `resume: ${fork.fromRunId} is a subagent: fork it from a turn (subagents fork ${fork.fromRunId} --turn N)`,
      );
    return { kind, handle: await api.forkSubagent(fork.fromRunId, { ...options, turn: fork.turn }) };
  } catch (err) {
    if (err instanceof ForkRefusedError) throw new UsageError(`${command}: ${err.message}`);
    throw err;
  }
}

/**
 * A subagent's fork, followed to its end (no live tree: one agent) and printed: with `--json` its result with its
 * own `run_id` (as `run --json` prints a run's), else its outcome and answer. 0 when it completed.
 */
async function followAndPrintSubagentFork(
  handle: SubagentForkHandle,
  { session, client, interrupts }: RunContext,
  json: boolean,
): Promise<number> {
  const followed = await followRun(handle, session, interrupts, () => {
    const stopWatching = session.watchWorkers(client);
    return handle.result().finally(stopWatching);
  });
  if ('detachedBy' in followed) return detachedExit(session, handle.runId, followed.detachedBy);
  const { result } = followed;
  interrupts.during(() => undefined);
  if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(`${forkedSubagentLines(result).join('\n')}\n`);
  if (followed.cancelledBy) return signalExitCode(followed.cancelledBy);
  if (result.status !== 'completed') {
    say(`subagents: run ${handle.runId} ended ${result.status}${result.error ? `: ${result.error}` : ''}`);
    return 1;
  }
  return 0;
}

/**
 * Follows the run with `follow` until it ends. Meanwhile the first signal cancels it (this command's worker
 * runs it and sees it end) or, when other workers run it, stops following it; a second one exits at once,
 * saying where the run stays.
 */
async function followRun<R>(
  handle: Pick<RunHandle, 'runId' | 'cancel'>,
  session: Session,
  interrupts: RunInterrupts,
  follow: () => Promise<R>,
): Promise<Followed<R>> {
  let detach: (signal: NodeJS.Signals) => void = () => undefined;
  const detached = new Promise<Followed<R>>(
    (resolve) => (detach = (signal) => resolve({ detachedBy: signal })),
  );
  let cancelRequested = false;
  let cancelledBy: NodeJS.Signals | undefined;
  const onFirst = (signal: NodeJS.Signals) => {
    if (session.detaches) {
      detach(signal);
      return;
    }
    cancelledBy = signal;
    say(
      `${signal}: cancelling run ${handle.runId}: its subagents are cancelled and report back ` +
        `(${signal === 'SIGINT' ? 'Ctrl-C' : signal} again to exit at once)`,
    );
    handle.cancel().then(
      () => (cancelRequested = true),
      (err: unknown) =>
        say(`subagents: could not request the cancellation: ${err instanceof Error ? err.message : err}`),
    );
  };
  interrupts.during(onFirst, () => session.leftBehind(handle.runId, cancelRequested));
  // A signal while the run was being started acts now.
  if (interrupts.signal) onFirst(interrupts.signal);
  return Promise.race([
    follow().then((result) => ({ result, ...(cancelledBy && { cancelledBy }) })),
    detached,
  ]);
}

export async function runCommand(args: string[]): Promise<number> {
  // --embedded: a dev server and a worker of this command's own, even when `subagents dev-server` runs.
  const { values, positionals } = parseFlags(args, {
    ...RUN_FLAGS,
    ...PROMPT_FLAGS,
    embedded: { type: 'boolean' },
    stream: { type: 'boolean' },
  });
  const config = loadCommandConfig(values);
  const prompt = await resolvePrompt({
    positionals,
    promptFile: stringFlag(values, 'prompt-file'),
    stdin: process.stdin,
  });
  return executeRun({ prompt, config, values, useServerWorkers: true });
}

/** The offline demo: three subagents in parallel on a copy of the sample workspace, then a combined answer. */
export async function startCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...RUN_FLAGS, once: { type: 'boolean' } });
  if (positionals.length > 0)
    throw new UsageError(`start: unexpected argument ${JSON.stringify(positionals[0])}`);
  // A real model when the environment names one (and no flag says otherwise); else the offline script.
  const online = Boolean(env.OPENAI_BASE_URL && env.OPENAI_API_KEY) && values.provider === undefined;
  const config = loadCommandConfig(online ? { ...values, provider: 'openai' } : values, env);
  if (!online) {
    for (const model of config.models) {
      if (model.provider === 'scripted' && !model.script_file)
        model.script_file = join(DEMO_DIR, 'script.yaml');
    }
  }
  // The demo's skills (cli/demo/skills) unless the config names a skills folder of its own that exists.
  if (existingSkillsRoot(config) === undefined) config.skills.path = join(DEMO_DIR, 'skills');
  say(
    online
      ? `Model: ${config.models[0].model} at ${env.OPENAI_BASE_URL}`
      : 'Model: the offline scripted demo model',
  );
  return executeRun({
    prompt: DEMO_PROMPT,
    config,
    values,
    env,
    sampleDir: join(DEMO_DIR, 'workspace'),
    keepServerUp: values.once !== true,
  });
}
