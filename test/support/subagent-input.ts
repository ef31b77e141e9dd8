/** Builds workflow inputs the way a run does: from a config (as a user writes it). */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveAgent, resolveSummarization } from '../../contracts/config/agents';
import { parseConfig } from '../../contracts/config';
import { MAX_CONCURRENT_CEILING, type LeadRunInput } from '../../contracts/lead';
import { buildLeadRunInput } from '../../contracts/config/lead-input';
import type { SubagentInput } from '../../contracts/subagent';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { buildBatchInput } from '../../client/batches';
import type { BatchInput, BatchItem, BatchLimits } from '../../contracts/batch';

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `${label}-`));
}

export function writeScript(dir: string, script: ModelScriptFileInput): string {
  const path = join(dir, 'script.json');
  writeFileSync(path, JSON.stringify(script, null, 2));
  return path;
}

/** A fresh folder holding an empty workspace. */
export function emptyWorkspace(label: string): { dir: string; workspace: string } {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return { dir, workspace };
}

/** A fresh folder holding an empty workspace and, beside it, the model script. */
export function scriptedWorkspace(
  label: string,
  script: ModelScriptFileInput,
): { dir: string; workspace: string; scriptFile: string } {
  const { dir, workspace } = emptyWorkspace(label);
  return { dir, workspace, scriptFile: writeScript(dir, script) };
}

/** The `task` calls of a lead that delegates `count` parts at once (`part0`, `part1`, …), each with its prompt. */
export function partTaskCalls(count: number, prompt: (i: number) => string) {
  return Array.from({ length: count }, (_, i) => ({
    name: 'task',
    id: `part${i}`,
    args: { description: `Part ${i}`, prompt: prompt(i), subagent_type: 'general-purpose' },
  }));
}

/**
 * A scripted lead whose first response delegates one general-purpose task per id (`Part <id>`), then answers
 * `answer`; each subagent answers "Part done." after `childMs`.
 */
export function fanOutScript(
  ids: readonly string[],
  childMs = 0,
  answer = 'Combined.',
): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: ids.map((id) => ({
              name: 'task',
              id,
              args: { description: `Part ${id}`, prompt: `Do part ${id}.`, subagent_type: 'general-purpose' },
            })),
          },
          { content: answer },
        ],
      },
      { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Part done.', delay_ms: childMs }] },
    ],
  };
}

export interface SubagentInputOptions {
  /** The config as YAML would give it; a scripted model reading `scriptFile` is added when `models` is absent. */
  config?: Record<string, unknown>;
  scriptFile?: string;
  agent?: string;
  prompt?: string;
  workspace: string;
  taskId?: string;
}

export function subagentInput(options: SubagentInputOptions): SubagentInput {
  const raw = {
    models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: options.scriptFile }],
    ...options.config,
  };
  const { config } = parseConfig(raw);
  const agent = resolveAgent(config, options.agent ?? 'general-purpose');
  const summarization = resolveSummarization(config);
  const taskId = options.taskId ?? 'call_1';
  return {
    run_id: 'test-run',
    task_id: taskId,
    description: 'test task',
    prompt: options.prompt ?? 'Do the task.',
    subagent_type: agent.name,
    agent,
    scope: {
      loop_detection: config.loop_detection,
      workspace: options.workspace,
      sandbox: config.sandbox,
      ...(summarization && { summarization }),
    },
    depth: 1,
  };
}

export interface LeadInputOptions {
  config?: Record<string, unknown>;
  scriptFile?: string;
  prompt?: string;
  workspace: string;
}

/** A lead run's input from a config, with a scripted model reading `scriptFile` unless `models` is given. */
export function leadInput(options: LeadInputOptions): LeadRunInput {
  const raw = {
    models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: options.scriptFile }],
    ...options.config,
  };
  return buildLeadRunInput(parseConfig(raw).config, {
    prompt: options.prompt ?? 'Do the work.',
    workspace: options.workspace,
  });
}

/**
 * A lead run (in a workspace of its own) whose first response delegates one task per id (at most four, the
 * per-response ceiling), all allowed at once:
 * its own per-response cap and total follow the fan-out, so only the worker's admission settings bound it.
 */
export function fanOutLeadInput(
  ids: readonly string[],
  childMs = 0,
  script: ModelScriptFileInput = fanOutScript(ids, childMs),
): LeadRunInput {
  const dir = tempDir('fan-out');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const width = Math.max(ids.length, 1);
  if (width > MAX_CONCURRENT_CEILING) {
    throw new Error(
      `fanOutLeadInput: ${width} task calls in one response; a response may hold at most ${MAX_CONCURRENT_CEILING} (start more runs)`,
    );
  }
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, script),
    config: {
      subagent_runtime: { max_running: width },
      subagents: { max_total_per_run: width, max_concurrent: width },
    },
  });
}

/**
 * `fanOutLeadInput` whose delegations hold their admission slots until `open()`: each subagent runs bash that
 * waits for a file in the workspace, and waits again after a bash call that ended otherwise (a worker stopped
 * under it), until the call's output says the gate opened; then it answers. For tests that must see requests
 * queue up behind a slot whatever the machine's speed (whichever delegation the slot went to).
 */
export function gatedFanOutLeadInput(
  ids: readonly string[],
  childMs = 0,
): { input: LeadRunInput; open: () => void } {
  const script = fanOutScript(ids, childMs);
  // The output `gate-2` is not in the command's text: only a call that saw the gate open shows it.
  const wait = {
    tool_calls: [
      { name: 'bash', args: { command: 'while [ ! -f .gate ]; do sleep 0.1; done; echo gate-$((1 + 1))' } },
    ],
  };
  script.scripts.unshift(
    ...ids.map((id) => ({
      agent: 'general-purpose',
      prompt_contains: `Do part ${id}.`,
      repeat_last: true,
      turns: [wait, { content: 'Part done.', delay_ms: childMs, if_missing: { text: 'gate-2', turn: wait } }],
    })),
  );
  const input = fanOutLeadInput(ids, childMs, script);
  return { input, open: () => writeFileSync(join(input.scope.workspace, '.gate'), '') };
}

/**
 * A batch's input over a scripted model, in a workspace of its own, as `batch start` builds one from a config
 * (`general-purpose` items).
 */
export function scriptedBatchInput(
  items: BatchItem[],
  limits: Partial<BatchLimits>,
  script: ModelScriptFileInput,
  description = 'Check items',
): BatchInput {
  const dir = tempDir('batch');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const { config } = parseConfig({
    models: [
      { name: 'scripted', provider: 'scripted', model: 'test', script_file: writeScript(dir, script) },
    ],
  });
  return buildBatchInput(config, { description, subagent_type: 'general-purpose', items, workspace, limits });
}

/**
 * A subagent whose first call is a host `bash` call that runs `seconds` (at most once: never retried), then an
 * answer: the call a worker is killed in.
 */
export function longBashInput(label: string, seconds: number): SubagentInput {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const scriptFile = writeScript(dir, {
    scripts: [
      {
        turns: [
          { content: 'A long one.', tool_calls: [{ name: 'bash', args: { command: `sleep ${seconds}` } }] },
          { content: 'It was cut short; done anyway.' },
        ],
      },
    ],
  });
  return subagentInput({
    workspace,
    scriptFile,
    config: { sandbox: { kind: 'host', allow_host_bash: true, bash_timeout_seconds: 300 } },
  });
}
