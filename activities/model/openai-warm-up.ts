/**
 * The first `openai` model call of a process costs 100–400 ms more than the next ones (BENCHMARKS.md,
 * "Provider hand-out"): Node loads its fetch implementation (undici) on first use and compiles its HTTP
 * parser, and LangChain's and the OpenAI client's code runs for the first time. Without a warm-up that cost lands on a
 * run's first model call and on the first hand-out to a subagent, on every `subagents run` (its worker is
 * new) and after every worker restart. A worker whose config names an `openai` model pays it while it starts
 * instead (ModelProviders.warmUp): one call through the same path, against a loopback server of its own that
 * streams a canned reply. Nothing leaves the machine, and no configured endpoint or key is used. A worker on
 * the offline model skips it, and so loads no LangChain before a run calls an `openai` model.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelCallInput } from '../../contracts/model';
import { completeChat } from './openai';

/** A streamed reply with text, a tool call and the usage chunk: every part the provider parses. */
const CANNED_STREAM = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: 'Warm' }, finish_reason: null }] },
  {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            { index: 0, id: 'call_warm_up', type: 'function', function: { name: 'ls', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
  },
  { choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
]
  .map((chunk) => ({
    id: 'warm-up',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'warm-up',
    ...chunk,
  }))
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .concat('data: [DONE]\n\n')
  .join('');

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

/** Gives up after this long; the process then pays the rest on its first real call. */
const WARM_UP_TIMEOUT_SECONDS = 5;

/**
 * Warms the `openai` provider: one call through it to a canned server. Best effort, never fails: where it
 * cannot (no loopback), the first call pays as before. Once a process is enough (ModelProviders keeps it).
 */
export function warmUpOpenAIProvider(): Promise<void> {
  return callCannedServer().catch(() => undefined);
}

async function callCannedServer(): Promise<void> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(CANNED_STREAM);
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    await completeChat(
      { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'warm-up' },
      {
        ...WARM_UP_CALL,
        model: {
          name: 'warm-up',
          provider: 'openai',
          model: 'warm-up',
          request_timeout_seconds: WARM_UP_TIMEOUT_SECONDS,
        },
      },
      // The canned server streams: nothing to remember about it.
      new Set(),
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
