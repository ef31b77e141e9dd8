/**
 * One MCP server as a worker holds it: its client (the official SDK's) over stdio, streamable HTTP or SSE, the
 * tools it listed, and its state. A server that cannot be reached is `down` with its reason; the next call,
 * a refresh (SIGHUP) or the catalog's retry timer connects again. Secrets (`env`, `headers`) are read here,
 * from this process's environment, and go nowhere but to the server.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type * as McpClientModule from '@modelcontextprotocol/sdk/client/index.js';
import type * as McpSseModule from '@modelcontextprotocol/sdk/client/sse.js';
import type * as McpStdioModule from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as McpStreamableHttpModule from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { envReferenceName } from '../../contracts/config/fields';
import type { McpServerConfig } from '../../contracts/config/mcp';
import { mcpToolName, TOOL_NAME_PATTERN } from '../../contracts/mcp';
import { loadOptional } from '../../payloads/optional-packages';

export type McpServerState = 'connected' | 'down' | 'disabled';

/** A tool as the catalog keeps it: the name the model sees, and what its server said about it. */
export interface McpToolEntry {
  /** `<server>__<tool>`. */
  name: string;
  server: string;
  /** The server's own name for it. */
  tool: string;
  description: string;
  /** Its JSON schema (`inputSchema`), shown to the model as is. */
  parameters: Record<string, unknown>;
  /** The server's `readOnlyHint`: calling it changes nothing, so a call may be retried. */
  read_only: boolean;
}

/*
 * The MCP SDK (~230 modules, ~23 MiB in a fresh process) is loaded when a server is first connected: a worker
 * whose config lists none never loads it (BENCHMARKS.md, "Where the memory goes"). Each transport is loaded
 * by the first server that uses it.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest */
const MCP = 'an MCP server (mcp_servers:)';
const mcpClient = () =>
  loadOptional(MCP, () => require('@modelcontextprotocol/sdk/client/index.js') as typeof McpClientModule);
const mcpStdio = () =>
  loadOptional(MCP, () => require('@modelcontextprotocol/sdk/client/stdio.js') as typeof McpStdioModule);
const mcpSse = () =>
  loadOptional(MCP, () => require('@modelcontextprotocol/sdk/client/sse.js') as typeof McpSseModule);
const mcpStreamableHttp = () =>
  loadOptional(
    MCP,
    () => require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof McpStreamableHttpModule,
  );
/* eslint-enable @typescript-eslint/no-require-imports */

/** The server cannot be reached (or its connection broke): the call did not start. */
export class McpUnavailableError extends Error {
  override name = 'McpUnavailableError';
}

/** How long connecting (spawning, the MCP handshake, listing tools) may take before the server counts as down. */
const CONNECT_TIMEOUT_MS = 30_000;

const REFUSED = 'it refused the connection';

/** How long a client refused by its server stays open for the calls still in flight on it. */
const CLOSE_AFTER_REFUSAL_MS = 5_000;

/** A call to a down server tries to connect again at most this often; sooner, it fails with the last reason. */
const RECONNECT_MIN_INTERVAL_MS = 2_000;

const ENV_BRACED = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * `$NAME` (the whole value, as the config file's other values) or `${NAME}` (anywhere in it, e.g.
 * `Bearer ${TOKEN}`) read from `env`: for env, headers and a stdio server's args, as DeerFlow reads its
 * extensions config. A missing variable is named in the error; the value never is.
 */
export function resolveEnvReferences(
  values: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
  where: string,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, resolveEnvValue(value, env, `${where}.${key}`)]),
  );
}

function resolveEnvValue(value: string, env: NodeJS.ProcessEnv, where: string): string {
  const read = (name: string): string => {
    const found = env[name];
    if (found === undefined) {
      throw new McpUnavailableError(`${where} names $${name}, which is not set in the worker's environment`);
    }
    return found;
  };
  const whole = envReferenceName(value);
  if (whole !== undefined) return read(whole);
  return value.replace(ENV_BRACED, (_match, name: string) => read(name));
}

/** A fetch that failed because nothing listens there (undici's `fetch failed`, caused by ECONNREFUSED). */
function isConnectionRefused(err: unknown): boolean {
  // Duck-typed, not `instanceof Error`: fetch's errors may come from another realm (a test runner's sandbox).
  let at = err as { code?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; typeof at === 'object' && at !== null && depth < 4; depth += 1) {
    if (at.code === 'ECONNREFUSED') return true;
    at = at.cause as typeof at;
  }
  return false;
}

/** The first line of an error's message (of any realm's error). */
export function reasonOf(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  return (typeof message === 'string' ? message : String(err)).split('\n')[0] || 'unknown error';
}

export class McpServerConnection {
  state: McpServerState;
  /** Why it is down. */
  reason?: string;
  tools: McpToolEntry[] = [];
  /** Tools left out: their full name is not a tool name providers accept. */
  skipped: string[] = [];
  private client?: Client;
  private connecting?: Promise<void>;
  private lastAttemptMs = 0;

  constructor(
    readonly name: string,
    readonly settings: McpServerConfig,
    private readonly env: NodeJS.ProcessEnv,
    /** Called when a connected server goes down (its process died, it refused a call). */
    private readonly onDown: (server: McpServerConnection) => void = () => undefined,
  ) {
    this.state = settings.enabled ? 'down' : 'disabled';
    if (!settings.enabled) this.reason = 'enabled: false';
  }

  /** Connects (once at a time) and lists the tools; a failure leaves the server `down` with its reason. */
  connect(): Promise<void> {
    if (this.state === 'disabled') return Promise.resolve();
    this.connecting ??= this.connectOnce().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Lists the tools again (connecting first when down). */
  async refresh(): Promise<void> {
    if (this.state === 'connected' && this.client) {
      try {
        await this.listTools(this.client);
        return;
      } catch (err) {
        this.markDown(this.client, reasonOf(err));
      }
    }
    await this.connect();
  }

  /** The tool by its server's name, connecting first when the server is down (at most every 2 s). */
  async toolFor(tool: string): Promise<McpToolEntry | undefined> {
    if (this.state === 'disabled') throw new McpUnavailableError('it is disabled (enabled: false)');
    if (this.state === 'down' && Date.now() - this.lastAttemptMs >= RECONNECT_MIN_INTERVAL_MS)
      await this.connect();
    if (this.state !== 'connected') throw new McpUnavailableError(this.reason ?? 'not connected');
    return this.tools.find((entry) => entry.tool === tool);
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult> {
    const client = this.client;
    if (this.state !== 'connected' || !client) throw new McpUnavailableError(this.reason ?? 'not connected');
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: options.signal,
        timeout: options.timeoutMs,
      });
      return result as CallToolResult;
    } catch (err) {
      // Refused before the request reached it (an HTTP server that stopped): down, and the call never ran.
      if (!isConnectionRefused(err)) throw err;
      // Other calls in flight on this client fail on their own (refused too) rather than by a close.
      this.markDown(client, REFUSED, CLOSE_AFTER_REFUSAL_MS);
      throw new McpUnavailableError(REFUSED);
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (this.state === 'connected') {
      this.state = 'down';
      this.reason = 'closed';
    }
    await client?.close().catch(() => undefined);
  }

  private async connectOnce(): Promise<void> {
    this.lastAttemptMs = Date.now();
    await this.close();
    let client: Client | undefined;
    try {
      client = new (mcpClient().Client)({ name: 'durable-subagents', version: '0.1.0' });
      const connected = client;
      connected.onclose = () => this.markDown(connected, 'the connection closed');
      await connected.connect(this.transport(), { timeout: CONNECT_TIMEOUT_MS });
      this.client = connected;
      await this.listTools(connected);
      this.state = 'connected';
      this.reason = undefined;
    } catch (err) {
      this.client = undefined;
      this.state = 'down';
      this.reason = isConnectionRefused(err) ? REFUSED : reasonOf(err);
      await client?.close().catch(() => undefined);
    }
  }

  private markDown(client: Client, reason: string, closeAfterMs = 0): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.state = 'down';
    this.reason = reason;
    this.onDown(this);
    const close = () => void client.close().catch(() => undefined);
    if (closeAfterMs === 0) close();
    else setTimeout(close, closeAfterMs).unref();
  }

  private transport(): Transport {
    const { settings } = this;
    const where = `mcp_servers.${this.name}`;
    if (settings.type === 'stdio') {
      return new (mcpStdio().StdioClientTransport)({
        command: settings.command ?? '',
        args: settings.args.map((arg, index) => resolveEnvValue(arg, this.env, `${where}.args[${index}]`)),
        // Merged by the SDK over a safe default environment (PATH, HOME, …), as DeerFlow's does.
        env: resolveEnvReferences(settings.env, this.env, `${where}.env`),
        stderr: 'inherit',
      });
    }
    const url = new URL(settings.url ?? '');
    const requestInit = { headers: resolveEnvReferences(settings.headers, this.env, `${where}.headers`) };
    return settings.type === 'sse'
      ? new (mcpSse().SSEClientTransport)(url, { requestInit })
      : new (mcpStreamableHttp().StreamableHTTPClientTransport)(url, { requestInit });
  }

  private async listTools(client: Client): Promise<void> {
    const tools: McpToolEntry[] = [];
    const skipped: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: CONNECT_TIMEOUT_MS,
      });
      for (const tool of page.tools) {
        const name = mcpToolName(this.name, tool.name);
        if (!TOOL_NAME_PATTERN.test(name)) {
          skipped.push(tool.name);
          continue;
        }
        tools.push({
          name,
          server: this.name,
          tool: tool.name,
          description: tool.description ?? tool.title ?? `Tool ${tool.name} of the MCP server ${this.name}.`,
          parameters: { ...tool.inputSchema, type: 'object' },
          read_only: tool.annotations?.readOnlyHint === true,
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.tools = tools;
    this.skipped = skipped;
  }
}
