/**
 * A small ACP agent for tests, written with the SDK's agent side: `node dist/test/support/acp-agent.js`, as an
 * ACP provider's command (`{type: acp, command: node, args: [<this file>]}`). Scripted like the fake model.
 *
 * The turn's script: a line `acp-script: <JSON array of steps>` in the prompt, else the JSON of
 * ACP_AGENT_SCRIPT, else `[{"say": "echo: <the prompt>"}]`. Steps, in order:
 * - `{"say": "text"}`: the text, streamed as agent_message_chunk updates in three pieces.
 * - `{"tool": {"id", "title", "kind", "input", "output", "status"}}`: a tool_call, then its tool_call_update
 *   with `status` (default completed) and `output` as text content.
 * - `{"permission": {"id", "title", "kind", "input", "options"}}`: a pending tool_call, then
 *   session/request_permission with `options` (default: allow_once `allow`, reject_once `reject`); then it
 *   says `permission: <optionId|cancelled>` and completes the call (allowed) or fails it.
 * - `{"usage": {"inputTokens", "outputTokens", "totalTokens"}}`: reported with the prompt's answer.
 * - `{"hold": true}`: waits for session/cancel, then ends the turn `cancelled`.
 * - `{"crash": "message"}`: writes the message to stderr and exits with code 3, mid-turn.
 * - `{"spawn_child": true}`: starts a child process that sleeps (in the agent's process group) and logs its pid.
 * - `{"stop": "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled"}`: ends the turn so
 *   (default, after the last step: end_turn).
 *
 * Environment knobs:
 * - ACP_AGENT_LOG: a file it appends one JSON line to per event: `spawned` (pid, cwd, probe = the value of
 *   ACP_AGENT_PROBE), `initialize`, `session_new` / `session_load` (session_id, cwd), `prompt` (session_id,
 *   text), `permission` (outcome), `cancel` (session_id), `child` (pid), `sigterm`, `exit`.
 * - ACP_AGENT_LOAD_SESSION=1: it advertises `loadSession` and loads any session id it is asked for (it
 *   answers with one agent_message_chunk of the "history" first, as a real agent replays one).
 * - ACP_AGENT_LOAD_FAILS=1: it advertises `loadSession` but answers session/load with an error.
 * - ACP_AGENT_AUTH_REQUIRED=1: session/new answers ACP's "authentication required" error.
 * - ACP_AGENT_PROTOCOL_VERSION: the protocol version it answers initialize with (default the SDK's).
 * - ACP_AGENT_CONFIG_MODELS: comma-separated model ids it offers as the session's `model` config option.
 * - ACP_AGENT_STUBBORN=1: it ignores its stdin closing and SIGTERM; only SIGKILL stops it.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { acpSdk, type Acp } from '../../activities/remote/acp/sdk';

type Step =
  | { say: string }
  | {
      tool: {
        id?: string;
        title?: string;
        kind?: Acp.ToolKind;
        input?: unknown;
        output?: string;
        status?: 'completed' | 'failed';
      };
    }
  | {
      permission: {
        id?: string;
        title?: string;
        kind?: Acp.ToolKind;
        input?: unknown;
        options?: Acp.PermissionOption[];
      };
    }
  | { usage: { inputTokens: number; outputTokens: number; totalTokens: number } }
  | { hold: true }
  | { crash: string }
  | { spawn_child: true }
  | { stop: Acp.StopReason };

const sdk = acpSdk();
const env = process.env;
const stubborn = env.ACP_AGENT_STUBBORN === '1';
const canLoad = env.ACP_AGENT_LOAD_SESSION === '1' || env.ACP_AGENT_LOAD_FAILS === '1';

function record(event: string, fields: Record<string, unknown> = {}): void {
  if (env.ACP_AGENT_LOG)
    appendFileSync(env.ACP_AGENT_LOG, `${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
}

function exit(code: number): never {
  record('exit', { code });
  process.exit(code);
}

function scriptOf(text: string): Step[] {
  const line = text.split('\n').find((candidate) => candidate.startsWith('acp-script:'));
  if (line !== undefined) return JSON.parse(line.slice('acp-script:'.length)) as Step[];
  if (env.ACP_AGENT_SCRIPT) return JSON.parse(env.ACP_AGENT_SCRIPT) as Step[];
  return [{ say: `echo: ${text}` }];
}

function pieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

function configOptions(): Acp.SessionConfigOption[] {
  const models = (env.ACP_AGENT_CONFIG_MODELS ?? '').split(',').filter((model) => model !== '');
  if (models.length === 0) return [];
  return [
    {
      type: 'select',
      id: 'model',
      name: 'Model',
      category: 'model',
      currentValue: models[0],
      options: models.map((model) => ({ value: model, name: model })),
    },
  ];
}

/** Sessions' pending cancels: session/cancel resolves the turn that holds. */
const cancels = new Map<string, () => void>();
let sessions = 0;

const app = sdk
  .agent({ name: 'acp-test-agent' })
  .onRequest('initialize', () => {
    record('initialize');
    return {
      protocolVersion: env.ACP_AGENT_PROTOCOL_VERSION
        ? Number(env.ACP_AGENT_PROTOCOL_VERSION)
        : sdk.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: canLoad },
      agentInfo: { name: 'acp-test-agent', version: '1.0.0' },
    };
  })
  .onRequest('session/new', ({ params }) => {
    if (env.ACP_AGENT_AUTH_REQUIRED === '1') throw sdk.RequestError.authRequired();
    sessions += 1;
    const sessionId = `session-${process.pid}-${sessions}`;
    record('session_new', { session_id: sessionId, cwd: params.cwd });
    return { sessionId, configOptions: configOptions() };
  })
  .onRequest('session/load', async ({ params, client }) => {
    record('session_load', { session_id: params.sessionId, cwd: params.cwd });
    if (env.ACP_AGENT_LOAD_FAILS === '1') throw sdk.RequestError.resourceNotFound(params.sessionId);
    await client.notify('session/update', {
      sessionId: params.sessionId,
      update: {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: 'history of the earlier turn' },
      },
    });
    return { configOptions: configOptions() };
  })
  .onRequest('session/set_config_option', ({ params }) => {
    record('set_config_option', { config_id: params.configId, value: params.value });
    return { configOptions: configOptions() };
  })
  .onNotification('session/cancel', ({ params }) => {
    record('cancel', { session_id: params.sessionId });
    cancels.get(params.sessionId)?.();
  })
  .onRequest('session/prompt', async ({ params, client }) => {
    const { sessionId } = params;
    const text = params.prompt
      .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
      .join('\n');
    record('prompt', { session_id: sessionId, text });
    const update = (sessionUpdate: Acp.SessionUpdate) =>
      client.notify('session/update', { sessionId, update: sessionUpdate });
    let usage: Record<string, number> | undefined;
    let calls = 0;
    for (const step of scriptOf(text)) {
      if ('say' in step) {
        for (const piece of pieces(step.say)) {
          await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: piece } });
        }
      } else if ('tool' in step) {
        calls += 1;
        const id = step.tool.id ?? `call-${calls}`;
        await update({
          sessionUpdate: 'tool_call',
          toolCallId: id,
          title: step.tool.title ?? 'A tool',
          kind: step.tool.kind ?? 'other',
          status: 'in_progress',
          rawInput: step.tool.input ?? {},
        });
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          status: step.tool.status ?? 'completed',
          content: [{ type: 'content', content: { type: 'text', text: step.tool.output ?? 'done' } }],
        });
      } else if ('permission' in step) {
        calls += 1;
        const id = step.permission.id ?? `call-${calls}`;
        const toolCall = {
          toolCallId: id,
          title: step.permission.title ?? 'A guarded tool',
          kind: step.permission.kind ?? 'execute',
          rawInput: step.permission.input ?? {},
        };
        await update({ sessionUpdate: 'tool_call', ...toolCall, status: 'pending' });
        const answer = await client.request('session/request_permission', {
          sessionId,
          toolCall: { toolCallId: id },
          options: step.permission.options ?? [
            { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
            { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
          ],
        });
        const chosen = answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled';
        record('permission', { outcome: chosen });
        await update({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: `permission: ${chosen}` },
        });
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          status: chosen.startsWith('allow') ? 'completed' : 'failed',
          content: [
            {
              type: 'content',
              content: { type: 'text', text: chosen.startsWith('allow') ? 'ran' : 'not run' },
            },
          ],
        });
      } else if ('usage' in step) {
        usage = step.usage;
      } else if ('hold' in step) {
        await new Promise<void>((resolve) => cancels.set(sessionId, resolve));
        cancels.delete(sessionId);
        return { stopReason: 'cancelled' };
      } else if ('crash' in step) {
        process.stderr.write(`${step.crash}\n`);
        exit(3);
      } else if ('spawn_child' in step) {
        const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
        record('child', { child_pid: child.pid });
      } else {
        return { stopReason: step.stop, ...(usage && { usage }) };
      }
    }
    return { stopReason: 'end_turn', ...(usage && { usage }) };
  });

process.on('SIGTERM', () => {
  record('sigterm');
  if (!stubborn) exit(0);
});

record('spawned', { cwd: process.cwd(), probe: env.ACP_AGENT_PROBE });
const connection = app.connect(
  sdk.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  ),
);
void connection.closed.then(() => {
  if (!stubborn) exit(0);
  // Stays until killed.
  setInterval(() => undefined, 60_000);
});
