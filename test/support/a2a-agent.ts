/**
 * A scriptable A2A agent over real HTTP (127.0.0.1), built with the A2A SDK's server side (its request handler,
 * in-memory task store and express handlers), for tests of the A2A remote subagent provider. It speaks A2A 1.0
 * over JSON-RPC (or HTTP+JSON), streams unless told not to, and counts what it receives, so a test can assert
 * "the prompt arrived exactly once" and "the task was cancelled", in this process or from another one.
 *
 * In-process:
 *
 *   const agent = await A2AAgent.start({ script: [{ keyword: 'slow', behaviour: { kind: 'hold' } }] });
 *   agent.url                 the endpoint (the card is at agent.cardUrl, the well-known path under it)
 *   agent.stats()             A2AAgentStats (below)
 *   await agent.waitFor((s) => s.holding.length === 1)   resolves on the first change where it holds
 *   agent.release(taskId?)    lets one held task (or all) complete
 *   agent.enqueue(behaviour…) appends to the queue
 *   await agent.close()
 *
 * From another process (test/support/a2a-agent-main.ts runs it and prints its URLs):
 *
 *   GET  <url>/_test/stats                                   → A2AAgentStats as JSON
 *   POST <url>/_test/release   {"task_id"?: "…"}              → releases one held task, or all
 *   POST <url>/_test/queue     [A2ABehaviour, …]              → appended to the queue
 *
 * with the helpers fetchA2AStats(url), waitForA2AStats(url, holds) and releaseA2ATasks(url, taskId?) below.
 *
 * Loading it (or the worker's A2A activity) under jest needs `jest.mock('jose', () => ({}))` in the test file:
 * the SDK's CommonJS build requires `jose`, an ES module jest cannot require before Node 24.9 (a process of
 * its own loads it natively).
 *
 * Which behaviour a new task gets: the first `script` entry whose keyword the prompt contains, else the next
 * of the queue, else `complete` (an echo of the prompt). A message sent to an existing task (the answer to
 * `input_required`) completes it with `answer received: <text>`. Behaviours:
 *
 *   complete        an artifact with `text` (default `done: <prompt>`), or with `artifact: false` the text as
 *                   the final status message; `usage` in the final status's metadata; `progress` messages
 *                   first (working updates); `delay_ms` before the end
 *   message         a message-only reply (no task) with `text`
 *   fail | reject   the task ends failed / rejected, the status message saying `message`
 *   auth_required   the task stops at auth-required, the status message saying `message`
 *   input_required  the task stops at input-required asking `question`; the answer completes it
 *   hold            working (with the status message `holding`) until released (release(), POST
 *                   /_test/release, or `gate_file` appearing), then completes with `text`; a cancel ends it
 *
 * Every cancel request is counted (per task and in total) whatever the task's state. With `token` set, every
 * A2A request and the card need `Authorization: Bearer <token>` (else HTTP 401); /_test/* never does.
 */
import { existsSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import type { AgentCard, Message, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'require' };
import type * as A2AServerModule from '@a2a-js/sdk/server' with { 'resolution-mode': 'require' };
import type * as A2AExpressModule from '@a2a-js/sdk/server/express' with { 'resolution-mode': 'require' };

/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is an ES module with a CommonJS build; express has no types here */
const server = require('@a2a-js/sdk/server') as typeof A2AServerModule;
const serverExpress = require('@a2a-js/sdk/server/express') as typeof A2AExpressModule;
const express = require('express') as ExpressFactory;
/* eslint-enable @typescript-eslint/no-require-imports */

/** The little of express this file uses. */
type Handler = (req: ExpressRequest, res: ExpressResponse, next: () => void) => void;
interface ExpressRequest {
  path: string;
  body?: unknown;
  header(name: string): string | undefined;
}
interface ExpressResponse {
  status(code: number): ExpressResponse;
  json(body: unknown): void;
}
interface ExpressApp extends http.RequestListener {
  use(...handlers: unknown[]): void;
  get(path: string, ...handlers: Handler[]): void;
  post(path: string, ...handlers: Handler[]): void;
}
type ExpressFactory = (() => ExpressApp) & { json(): unknown };

export interface A2AUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
}

export type A2ABehaviour =
  | {
      kind: 'complete';
      text?: string;
      /** `false`: no artifact, the text is the final status message. Default true. */
      artifact?: boolean;
      usage?: A2AUsage;
      progress?: string[];
      delay_ms?: number;
    }
  | { kind: 'message'; text?: string; usage?: A2AUsage }
  | { kind: 'fail'; message?: string }
  | { kind: 'reject'; message?: string }
  | { kind: 'auth_required'; message?: string }
  | { kind: 'input_required'; question?: string; usage?: A2AUsage }
  | { kind: 'hold'; gate_file?: string; text?: string; usage?: A2AUsage };

export interface A2AScriptEntry {
  /** Chosen when the prompt contains it. */
  keyword: string;
  behaviour: A2ABehaviour;
}

export interface A2AAgentOptions {
  /** Default: a free port. */
  port?: number;
  script?: A2AScriptEntry[];
  queue?: A2ABehaviour[];
  /** The card's `capabilities.streaming`. Default true. */
  streaming?: boolean;
  /** The binding the card offers. Default JSONRPC. */
  transport?: 'JSONRPC' | 'HTTP+JSON';
  /** When set, A2A requests and the card need `Authorization: Bearer <token>`. */
  token?: string;
}

export interface A2AReceivedMessage {
  message_id: string;
  task_id: string;
  context_id: string;
  text: string;
  metadata?: { [key: string]: unknown };
}

export interface A2AAgentStats {
  /** Every message the agent was sent (new tasks and answers). */
  messages_total: number;
  /** How often each message id arrived. */
  messages_by_id: Record<string, number>;
  messages: A2AReceivedMessage[];
  cancels_total: number;
  cancels_by_task: Record<string, number>;
  /** Each task the agent made: its behaviour's kind and its state (`working`, `completed`, …). */
  tasks: Record<string, { behaviour: string; state: string; first_message_id: string; context_id: string }>;
  /** The tasks held right now (`hold`). */
  holding: string[];
}

const ROLE_AGENT = 2;
const STATE = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  input_required: 6,
  rejected: 7,
  auth_required: 8,
} as const;
type StateName = keyof typeof STATE;

/** How often a hold looks for its gate file. */
const GATE_POLL_MS = 50;
/** How often waitForA2AStats reads the stats of an agent in another process. */
const STATS_POLL_MS = 50;

function textOf(message: Message): string {
  return message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function agentMessage(text: string, taskId: string, contextId: string): Message {
  return {
    messageId: `agent-${Math.random().toString(36).slice(2)}`,
    taskId,
    contextId,
    role: ROLE_AGENT,
    parts: [
      { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** One task being executed: how to wake it, and whether a cancel did. */
interface Running {
  wake: () => void;
  cancelled: boolean;
}

export class A2AAgent {
  private readonly changes = new EventEmitter();
  private readonly queue: A2ABehaviour[];
  private readonly running = new Map<string, Running>();
  private readonly behaviours = new Map<string, A2ABehaviour>();
  private readonly data: A2AAgentStats = {
    messages_total: 0,
    messages_by_id: {},
    messages: [],
    cancels_total: 0,
    cancels_by_task: {},
    tasks: {},
    holding: [],
  };
  private listeningPort = 0;
  private httpServer?: http.Server;

  private constructor(private readonly options: A2AAgentOptions) {
    this.queue = [...(options.queue ?? [])];
    this.changes.setMaxListeners(0);
  }

  /** Starts an agent on 127.0.0.1 and resolves once it listens. */
  static async start(options: A2AAgentOptions = {}): Promise<A2AAgent> {
    const agent = new A2AAgent(options);
    await agent.listen();
    return agent;
  }

  /** The endpoint: the provider's `url` (the card is found at its well-known path). */
  get url(): string {
    return `http://127.0.0.1:${this.listeningPort}`;
  }

  get cardUrl(): string {
    return `${this.url}/.well-known/agent-card.json`;
  }

  /** The port it listens on (kept after close, so a test can aim at a port where nothing listens). */
  get port(): number {
    return this.listeningPort;
  }

  stats(): A2AAgentStats {
    return structuredClone(this.data);
  }

  /** Resolves with the stats as soon as `holds` is true of them (now, or at a later change). */
  waitFor(holds: (stats: A2AAgentStats) => boolean): Promise<A2AAgentStats> {
    return new Promise((resolve) => {
      const check = (): void => {
        const stats = this.stats();
        if (!holds(stats)) return;
        this.changes.off('change', check);
        resolve(stats);
      };
      this.changes.on('change', check);
      check();
    });
  }

  enqueue(...behaviours: A2ABehaviour[]): void {
    this.queue.push(...behaviours);
  }

  /** Lets a held task (or every one) complete. */
  release(taskId?: string): void {
    for (const [id, running] of this.running) {
      if (taskId !== undefined && id !== taskId) continue;
      running.wake();
    }
  }

  async close(): Promise<void> {
    for (const running of this.running.values()) {
      running.cancelled = true;
      running.wake();
    }
    const serverToClose = this.httpServer;
    if (serverToClose === undefined) return;
    serverToClose.closeAllConnections();
    await new Promise<void>((resolve) => serverToClose.close(() => resolve()));
  }

  private changed(): void {
    this.changes.emit('change');
  }

  private setState(taskId: string, state: StateName): void {
    const task = this.data.tasks[taskId];
    if (task !== undefined) task.state = state;
    this.changed();
  }

  private card(): AgentCard {
    const binding = this.options.transport ?? 'JSONRPC';
    return {
      name: 'test-a2a-agent',
      description: 'A scriptable A2A agent for tests.',
      supportedInterfaces: [
        {
          url: binding === 'JSONRPC' ? `${this.url}/a2a/jsonrpc` : `${this.url}/a2a/rest`,
          protocolBinding: binding,
          tenant: '',
          protocolVersion: '1.0',
        },
      ],
      provider: undefined,
      version: '1.0.0',
      capabilities: {
        streaming: this.options.streaming ?? true,
        pushNotifications: false,
        extensions: [],
        extendedAgentCard: false,
      },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        {
          id: 'scripted',
          name: 'scripted',
          description: 'Does what the test scripted.',
          tags: [],
          examples: [],
          inputModes: [],
          outputModes: [],
          securityRequirements: [],
        },
      ],
      signatures: [],
    };
  }

  private async listen(): Promise<void> {
    const app = express();
    const httpServer = http.createServer(app);
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(this.options.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.httpServer = httpServer;
    this.listeningPort = (httpServer.address() as AddressInfo).port;

    const handler = new server.DefaultRequestHandler(this.card(), new server.InMemoryTaskStore(), {
      execute: (context, bus) => this.execute(context, bus),
      cancelTask: (taskId, bus) => this.cancel(taskId, bus),
    });
    app.use(express.json());
    app.get('/_test/stats', (_req, res) => res.json(this.stats()));
    app.post('/_test/release', (req, res) => {
      const taskId = (req.body as { task_id?: unknown } | undefined)?.task_id;
      this.release(typeof taskId === 'string' ? taskId : undefined);
      res.json({ released: true });
    });
    app.post('/_test/queue', (req, res) => {
      if (!Array.isArray(req.body)) {
        res.status(400).json({ error: 'expected a JSON array of behaviours' });
        return;
      }
      this.enqueue(...(req.body as A2ABehaviour[]));
      res.json({ queued: this.queue.length });
    });
    const token = this.options.token;
    if (token !== undefined) {
      app.use((req: ExpressRequest, res: ExpressResponse, next: () => void) => {
        if (req.header('authorization') === `Bearer ${token}`) next();
        else res.status(401).json({ error: 'missing or wrong bearer token' });
      });
    }
    const userBuilder = serverExpress.UserBuilder.noAuthentication;
    app.use('/.well-known/agent-card.json', serverExpress.agentCardHandler({ agentCardProvider: handler }));
    app.use('/a2a/jsonrpc', serverExpress.jsonRpcHandler({ requestHandler: handler, userBuilder }));
    app.use('/a2a/rest', serverExpress.restHandler({ requestHandler: handler, userBuilder }));
  }

  private pick(prompt: string): A2ABehaviour {
    const scripted = this.options.script?.find((entry) => prompt.includes(entry.keyword));
    return scripted?.behaviour ?? this.queue.shift() ?? { kind: 'complete' };
  }

  private receive(message: Message, taskId: string, contextId: string): string {
    const text = textOf(message);
    this.data.messages_total += 1;
    this.data.messages_by_id[message.messageId] = (this.data.messages_by_id[message.messageId] ?? 0) + 1;
    this.data.messages.push({
      message_id: message.messageId,
      task_id: taskId,
      context_id: contextId,
      text,
      ...(message.metadata !== undefined && { metadata: message.metadata }),
    });
    this.changed();
    return text;
  }

  private async execute(
    context: A2AServerModule.RequestContext,
    bus: A2AServerModule.ExecutionEventBus,
  ): Promise<void> {
    const { taskId, contextId } = context;
    const message = context.userMessage;
    const text = this.receive(message, taskId, contextId);
    const status = (
      state: StateName,
      said?: string,
      metadata?: { [key: string]: unknown },
      final = false,
    ): void => {
      bus.publish(
        server.AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: {
            state: STATE[state],
            message: said === undefined ? undefined : agentMessage(said, taskId, contextId),
            timestamp: new Date().toISOString(),
          },
          metadata,
        }),
      );
      this.setState(taskId, state);
      if (final) bus.finished();
    };

    if (context.task !== undefined) {
      // A follow-up (the answer to input-required): the task first, as the SDK asks of every turn.
      bus.publish(server.AgentEvent.task(context.task));
      const behaviour = this.behaviours.get(taskId);
      const usage = behaviour !== undefined && 'usage' in behaviour ? behaviour.usage : undefined;
      this.artifact(bus, taskId, contextId, `answer received: ${text}`);
      status('completed', undefined, usage && { usage }, true);
      return;
    }

    const behaviour = this.pick(text);
    if (behaviour.kind === 'message') {
      bus.publish(
        server.AgentEvent.message({
          ...agentMessage(behaviour.text ?? `reply: ${text}`, '', contextId),
          metadata: behaviour.usage && { usage: behaviour.usage },
        }),
      );
      bus.finished();
      return;
    }
    this.behaviours.set(taskId, behaviour);
    this.data.tasks[taskId] = {
      behaviour: behaviour.kind,
      state: 'submitted',
      first_message_id: message.messageId,
      context_id: contextId,
    };
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: STATE.submitted, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [message],
      metadata: undefined,
    };
    bus.publish(server.AgentEvent.task(task));
    this.changed();

    switch (behaviour.kind) {
      case 'fail':
        status('failed', behaviour.message ?? 'the scripted task failed', undefined, true);
        return;
      case 'reject':
        status('rejected', behaviour.message ?? 'the scripted agent will not do this', undefined, true);
        return;
      case 'auth_required':
        status('auth_required', behaviour.message ?? 'sign in to the scripted agent first');
        return;
      case 'input_required':
        status('input_required', behaviour.question ?? 'Which one do you mean?');
        return;
      case 'hold': {
        status('working', 'holding');
        const running = this.track(taskId, behaviour.gate_file);
        this.data.holding.push(taskId);
        this.changed();
        await running.done;
        this.data.holding = this.data.holding.filter((id) => id !== taskId);
        if (running.state.cancelled) {
          status('canceled', 'cancelled on request', undefined, true);
          return;
        }
        this.artifact(bus, taskId, contextId, behaviour.text ?? `released: ${text}`);
        status('completed', undefined, behaviour.usage && { usage: behaviour.usage }, true);
        return;
      }
      case 'complete': {
        status('working');
        for (const step of behaviour.progress ?? []) status('working', step);
        if (behaviour.delay_ms !== undefined) {
          const running = this.track(taskId, undefined, behaviour.delay_ms);
          await running.done;
          if (running.state.cancelled) {
            status('canceled', 'cancelled on request', undefined, true);
            return;
          }
        }
        const answer = behaviour.text ?? `done: ${text}`;
        const usage = behaviour.usage && { usage: behaviour.usage };
        if (behaviour.artifact === false) {
          status('completed', answer, usage, true);
          return;
        }
        this.artifact(bus, taskId, contextId, answer);
        status('completed', undefined, usage, true);
        return;
      }
    }
  }

  private artifact(
    bus: A2AServerModule.ExecutionEventBus,
    taskId: string,
    contextId: string,
    text: string,
  ): void {
    bus.publish(
      server.AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'answer',
          name: 'answer',
          description: '',
          parts: [
            {
              content: { $case: 'text', value: text },
              mediaType: 'text/plain',
              filename: '',
              metadata: undefined,
            },
          ],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
  }

  /** A wait a cancel, a release, the gate file or the delay ends. */
  private track(
    taskId: string,
    gateFile: string | undefined,
    delayMs?: number,
  ): { state: Running; done: Promise<void> } {
    let wake = (): void => undefined;
    const done = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const state: Running = { wake: () => wake(), cancelled: false };
    this.running.set(taskId, state);
    const timers: NodeJS.Timeout[] = [];
    if (gateFile !== undefined) {
      timers.push(setInterval(() => existsSync(gateFile) && state.wake(), GATE_POLL_MS));
    }
    if (delayMs !== undefined) timers.push(setTimeout(() => state.wake(), delayMs));
    return {
      state,
      done: done.then(() => {
        for (const timer of timers) clearInterval(timer);
        this.running.delete(taskId);
      }),
    };
  }

  private async cancel(taskId: string, bus: A2AServerModule.ExecutionEventBus): Promise<void> {
    this.data.cancels_total += 1;
    this.data.cancels_by_task[taskId] = (this.data.cancels_by_task[taskId] ?? 0) + 1;
    this.changed();
    const running = this.running.get(taskId);
    if (running !== undefined) {
      // The executing task publishes its own end.
      running.cancelled = true;
      running.wake();
      return;
    }
    // Not executing (stopped at input- or auth-required): the end is published here.
    const task = this.data.tasks[taskId];
    bus.publish(
      server.AgentEvent.statusUpdate({
        taskId,
        contextId: task?.context_id ?? '',
        status: { state: STATE.canceled, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    if (task !== undefined) task.state = 'canceled';
    bus.finished();
    this.changed();
  }
}

/** The stats of an agent in another process (`GET <url>/_test/stats`). */
export async function fetchA2AStats(url: string): Promise<A2AAgentStats> {
  const response = await fetch(`${url}/_test/stats`);
  if (!response.ok) throw new Error(`${url}/_test/stats answered HTTP ${response.status}`);
  return (await response.json()) as A2AAgentStats;
}

/**
 * Resolves with the stats of an agent in another process as soon as `holds` is true of them (read every
 * STATS_POLL_MS); fails after `timeoutMs` with the last stats read.
 */
export async function waitForA2AStats(
  url: string,
  holds: (stats: A2AAgentStats) => boolean,
  timeoutMs = 60_000,
): Promise<A2AAgentStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await fetchA2AStats(url);
    if (holds(stats)) return stats;
    if (Date.now() > deadline) {
      throw new Error(
        `the A2A agent at ${url} did not get there within ${timeoutMs} ms: ${JSON.stringify(stats)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, STATS_POLL_MS));
  }
}

/** Lets one held task (or every one) of an agent in another process complete (`POST <url>/_test/release`). */
export async function releaseA2ATasks(url: string, taskId?: string): Promise<void> {
  const response = await fetch(`${url}/_test/release`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(taskId === undefined ? {} : { task_id: taskId }),
  });
  if (!response.ok) throw new Error(`${url}/_test/release answered HTTP ${response.status}`);
}
