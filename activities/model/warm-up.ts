/**
 * The first call of a network model provider in a process costs 100–400 ms more than the next ones
 * (BENCHMARKS.md, "Provider hand-out"): Node loads its fetch implementation (undici) on first use and compiles
 * its HTTP parser, and LangChain's and the provider client's code runs for the first time. Without a warm-up
 * that cost lands on a run's first model call and on the first hand-out to a subagent, on every `subagents
 * run` (its worker is new) and after every worker restart. A worker whose config names a provider pays it
 * while it starts instead (ModelProviders.warmUp): one call through the same path (chat-call.ts), against a
 * loopback server of its own that streams a canned reply in that provider's wire format (wire-replies.ts).
 * Nothing leaves the machine, and no configured endpoint or key is used. A worker on the offline model skips
 * it, and so loads no LangChain before a run calls a network provider.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelCallInput, ModelSettings, NetworkModelProvider } from '../../contracts/model';
import { callChatModel, type ProviderEndpoint } from './chat-call';
import { LANGCHAIN_PROVIDERS } from './providers';
import {
  anthropicStream,
  bedrockStream,
  geminiStream,
  ollamaStream,
  openaiStream,
  type WireReply,
} from './wire-replies';

const WARM_UP_CALL: Omit<ModelCallInput, 'model'> = {
  agent_name: 'warm-up',
  messages: [
    { role: 'system', content: 'Warm-up.' },
    { role: 'user', content: 'Warm-up.' },
  ],
  tools: [
    {
      name: 'ls',
      description: 'Warm-up.',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    },
  ],
};

/** The canned reply: text, a tool call, usage; every part a provider parses, in each one's words. */
function cannedReply(stopReason: string): WireReply {
  return {
    model: 'warm-up',
    text: 'Warm',
    tool_calls: [{ id: 'call_warm_up', name: 'ls', args: '{}' }],
    stop_reason: stopReason,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

/** Each provider's streamed reply, as its loopback server sends it. */
const CANNED: Readonly<
  Record<NetworkModelProvider, { contentType: string; body: () => Array<string | Buffer> }>
> = {
  openai: {
    contentType: 'text/event-stream',
    body: () => openaiStream(cannedReply('tool_calls'), 'warm-up'),
  },
  azure_openai: {
    contentType: 'text/event-stream',
    body: () => openaiStream(cannedReply('tool_calls'), 'warm-up'),
  },
  anthropic: {
    contentType: 'text/event-stream',
    body: () => anthropicStream(cannedReply('tool_use'), 'msg_warm_up'),
  },
  google: { contentType: 'text/event-stream', body: () => geminiStream(cannedReply('STOP')) },
  ollama: { contentType: 'application/x-ndjson', body: () => ollamaStream(cannedReply('stop')) },
  bedrock: {
    contentType: 'application/vnd.amazon.eventstream',
    body: () => bedrockStream(cannedReply('tool_use')),
  },
};

/** Gives up after this long; the process then pays the rest on its first real call. */
const WARM_UP_TIMEOUT_SECONDS = 5;

/**
 * Warms a provider: one call through it to a canned server. Best effort, never fails: where it cannot (no
 * loopback), the first call pays as before. Once a process is enough (ModelProviders keeps it).
 */
export function warmUpProvider(provider: NetworkModelProvider): Promise<void> {
  return callCannedServer(provider).catch(() => undefined);
}

async function callCannedServer(provider: NetworkModelProvider): Promise<void> {
  const canned = CANNED[provider];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': canned.contentType });
      writeAll(response, canned.body());
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    const model: ModelSettings = {
      name: 'warm-up',
      provider,
      model: 'warm-up',
      request_timeout_seconds: WARM_UP_TIMEOUT_SECONDS,
      ...(provider === 'azure_openai' && { api_version: 'warm-up', azure_deployment: 'warm-up' }),
      ...(provider === 'bedrock' && { region: 'us-east-1' }),
    };
    // The canned key and credentials: the same signing and headers as a real call, for nobody's account.
    const endpoint: ProviderEndpoint = {
      baseUrl: provider === 'openai' ? `${origin}/v1` : origin,
      apiKey: provider === 'bedrock' ? undefined : 'warm-up',
      ...(provider === 'bedrock' && { aws: { accessKeyId: 'warm-up', secretAccessKey: 'warm-up' } }),
    };
    const input: ModelCallInput = { ...WARM_UP_CALL, model };
    // The canned server streams: nothing to remember about it.
    await callChatModel(input, LANGCHAIN_PROVIDERS[provider].chatCall(input, endpoint), new Set());
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

function writeAll(response: ServerResponse, parts: Array<string | Buffer>): void {
  for (const part of parts) response.write(part);
  response.end();
}
