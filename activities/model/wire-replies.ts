/**
 * A model's answer as each provider puts it on the wire, streamed and plain: OpenAI's Chat Completions
 * chunks (SSE), Anthropic's Messages events (SSE), Gemini's `GenerateContentResponse` chunks (SSE with `alt=sse`), Ollama's `/api/chat` lines (NDJSON),
 * Bedrock's Converse response and ConverseStream events (AWS's binary event stream). The one definition of
 * these shapes in the project: the warm-up's loopback server (warm-up.ts) answers with them, and so do the
 * test suites' fake servers, which script them turn by turn.
 */
import { crc32 } from 'node:zlib';

/** One answer, in our words; each writer turns it into its provider's. */
export interface WireReply {
  model: string;
  text: string;
  /** `args`: the JSON text of the arguments (an object; Gemini's and Ollama's wire carry it parsed). */
  tool_calls: Array<{ id: string; name: string; args: string }>;
  /** The provider's own stop reason: `end_turn`, `STOP`, `stop`, `tool_use`… */
  stop_reason: string;
  /**
   * Anthropic's and Bedrock's: the model's thinking before its answer, with the signature that seals it. Gemini's
   * wire carries only the signature (its thoughts are not asked for), on the answer's first function call.
   */
  thinking?: { text: string; signature: string };
  /** `input_tokens` counts every prompt token, cached ones included (the writers split them as each wire does). */
  usage?: {
    input_tokens: number;
    output_tokens: number;
    /** Default: input + output. */
    total_tokens?: number;
    cache_read_tokens?: number;
    cache_write_tokens?: number;
  };
}

// Word-sized pieces, so a client has to put several deltas together to get the text back.
function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function halves(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

function argsObject(args: string): unknown {
  return args === '' ? {} : JSON.parse(args);
}

/** The prompt tokens read and written by the cache, and the rest (Anthropic's and Bedrock's `input_tokens`). */
function inputSplit(usage: NonNullable<WireReply['usage']>) {
  const read = usage.cache_read_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  return { read, written, uncached: Math.max(0, usage.input_tokens - read - written) };
}

// ---- OpenAI: Chat Completions (and Azure's deployments) ----

function openaiUsage(usage: WireReply['usage']) {
  if (!usage) return undefined;
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
    ...(usage.cache_read_tokens !== undefined && {
      prompt_tokens_details: { cached_tokens: usage.cache_read_tokens },
    }),
  };
}

function openaiToolCalls(reply: WireReply) {
  return reply.tool_calls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.args },
  }));
}

/** A `chat.completion` (a request without `stream`). */
export function openaiCompletion(reply: WireReply, id: string): Record<string, unknown> {
  const toolCalls = openaiToolCalls(reply);
  const usage = openaiUsage(reply.usage);
  return {
    id,
    object: 'chat.completion',
    created: 0,
    model: reply.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text || null,
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
        finish_reason: reply.stop_reason,
      },
    ],
    ...(usage && { usage }),
  };
}

/**
 * A `chat.completion.chunk` stream: the role, the text in pieces, each tool call's id and name then its
 * arguments in halves, the finish reason, the usage chunk (when `reply.usage` is given: the request asked for
 * it with `stream_options.include_usage`), `[DONE]`.
 */
export function openaiStream(reply: WireReply, id: string): string[] {
  const base = { id, object: 'chat.completion.chunk', created: 0, model: reply.model };
  const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const events: unknown[] = [choice({ role: 'assistant', content: '' })];
  for (const content of pieces(reply.text)) events.push(choice({ content }));
  openaiToolCalls(reply).forEach((call, index) => {
    events.push(
      choice({ tool_calls: [{ index, ...call, function: { name: call.function.name, arguments: '' } }] }),
    );
    for (const part of halves(call.function.arguments)) {
      events.push(choice({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  events.push(choice({}, reply.stop_reason));
  const usage = openaiUsage(reply.usage);
  if (usage) events.push({ ...base, choices: [], usage });
  return [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), 'data: [DONE]\n\n'];
}

// ---- Anthropic: the Messages API ----

function anthropicUsage(usage: WireReply['usage'], outputTokens: number) {
  if (!usage) return { input_tokens: 0, output_tokens: outputTokens };
  const { read, written, uncached } = inputSplit(usage);
  return {
    input_tokens: uncached,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: outputTokens,
  };
}

/** A Messages API response (`stream: false`). */
export function anthropicMessage(reply: WireReply, id: string): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: [
      ...(reply.thinking
        ? [{ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature }]
        : []),
      ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
      ...reply.tool_calls.map((call) => ({
        type: 'tool_use',
        id: call.id,
        name: call.name,
        input: argsObject(call.args),
      })),
    ],
    stop_reason: reply.stop_reason,
    stop_sequence: null,
    usage: anthropicUsage(reply.usage, reply.usage?.output_tokens ?? 0),
  };
}

/** One SSE event as Anthropic writes it: its type on the `event:` line and in the data. */
export function anthropicEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A Messages API stream: message_start, each block's start/deltas/stop, message_delta, message_stop. */
export function anthropicStream(reply: WireReply, id: string): string[] {
  const message = { ...anthropicMessage(reply, id), content: [], stop_reason: null };
  // Anthropic's first event counts the prompt and one output token; message_delta has the answer's total.
  const events = [
    anthropicEvent({ type: 'message_start', message: { ...message, usage: anthropicUsage(reply.usage, 1) } }),
  ];
  let index = 0;
  if (reply.thinking) {
    const { text, signature } = reply.thinking;
    const start = { type: 'thinking', thinking: '', signature: '' };
    events.push(anthropicEvent({ type: 'content_block_start', index, content_block: start }));
    for (const thinking of pieces(text)) {
      events.push(
        anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }),
      );
    }
    events.push(
      anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } }),
    );
    events.push(anthropicEvent({ type: 'content_block_stop', index }));
    index++;
  }
  if (reply.text) {
    events.push(
      anthropicEvent({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    );
    events.push(anthropicEvent({ type: 'ping' }));
    for (const text of pieces(reply.text)) {
      events.push(
        anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
      );
    }
    events.push(anthropicEvent({ type: 'content_block_stop', index }));
    index++;
  }
  for (const call of reply.tool_calls) {
    events.push(
      anthropicEvent({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const part of halves(call.args)) {
      events.push(
        anthropicEvent({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: part },
        }),
      );
    }
    events.push(anthropicEvent({ type: 'content_block_stop', index }));
    index++;
  }
  events.push(
    anthropicEvent({
      type: 'message_delta',
      delta: { stop_reason: reply.stop_reason, stop_sequence: null },
      usage: { output_tokens: reply.usage?.output_tokens ?? 0 },
    }),
  );
  events.push(anthropicEvent({ type: 'message_stop' }));
  return events;
}

// ---- Gemini: generateContent / streamGenerateContent ----

function geminiUsage(usage: WireReply['usage'], outputTokens: number) {
  if (!usage) return undefined;
  return {
    promptTokenCount: usage.input_tokens,
    candidatesTokenCount: outputTokens,
    totalTokenCount: usage.input_tokens + outputTokens,
    ...(usage.cache_read_tokens ? { cachedContentTokenCount: usage.cache_read_tokens } : {}),
  };
}

function geminiChunk(reply: WireReply, parts: unknown[], finished: boolean, outputTokens: number) {
  const usage = geminiUsage(reply.usage, outputTokens);
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        ...(finished && { finishReason: reply.stop_reason }),
        index: 0,
      },
    ],
    ...(usage && { usageMetadata: usage }),
    modelVersion: reply.model,
  };
}

function geminiParts(reply: WireReply, text: string): unknown[] {
  const signature = reply.thinking?.signature;
  return [
    ...(text ? [{ text }] : []),
    ...reply.tool_calls.map((call, k) => ({
      functionCall: { name: call.name, args: argsObject(call.args) },
      ...(k === 0 && signature !== undefined && { thoughtSignature: signature }),
    })),
  ];
}

/** A `generateContent` response. */
export function geminiResponse(reply: WireReply): Record<string, unknown> {
  return geminiChunk(reply, geminiParts(reply, reply.text), true, reply.usage?.output_tokens ?? 0);
}

/**
 * A `streamGenerateContent?alt=sse` stream: the text in pieces, the function calls whole in the last chunk
 * (Gemini never splits one), each chunk with the usage so far.
 */
export function geminiStream(reply: WireReply): string[] {
  const texts = pieces(reply.text);
  const output = reply.usage?.output_tokens ?? 0;
  const chunks: unknown[] = texts
    .slice(0, -1)
    .map((text, i) =>
      geminiChunk(reply, [{ text }], false, Math.floor((output * (i + 1)) / (texts.length + 1))),
    );
  chunks.push(geminiChunk(reply, geminiParts(reply, texts[texts.length - 1] ?? ''), true, output));
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`);
}

// ---- Ollama: /api/chat ----

function ollamaLine(
  reply: WireReply,
  message: Record<string, unknown>,
  done: boolean,
): Record<string, unknown> {
  return {
    model: reply.model,
    created_at: '2026-01-01T00:00:00Z',
    message: { role: 'assistant', content: '', ...message },
    done,
    ...(done && {
      done_reason: reply.stop_reason,
      total_duration: 1,
      ...(reply.usage && {
        prompt_eval_count: reply.usage.input_tokens,
        eval_count: reply.usage.output_tokens,
      }),
    }),
  };
}

function ollamaToolCalls(reply: WireReply) {
  return reply.tool_calls.map((call) => ({
    function: { name: call.name, arguments: argsObject(call.args) },
  }));
}

/** An `/api/chat` response with `stream: false`. */
export function ollamaResponse(reply: WireReply): Record<string, unknown> {
  const toolCalls = ollamaToolCalls(reply);
  return ollamaLine(
    reply,
    { content: reply.text, ...(toolCalls.length > 0 && { tool_calls: toolCalls }) },
    true,
  );
}

/** An `/api/chat` stream: a JSON line a piece of text, one with the tool calls, the last with the counts. */
export function ollamaStream(reply: WireReply): string[] {
  const lines = pieces(reply.text).map((content) => ollamaLine(reply, { content }, false));
  const toolCalls = ollamaToolCalls(reply);
  if (toolCalls.length > 0) lines.push(ollamaLine(reply, { tool_calls: toolCalls }, false));
  lines.push(ollamaLine(reply, {}, true));
  return lines.map((line) => `${JSON.stringify(line)}\n`);
}

// ---- Bedrock: Converse / ConverseStream ----

function bedrockUsage(usage: WireReply['usage']) {
  if (!usage) return undefined;
  const { read, written, uncached } = inputSplit(usage);
  return {
    inputTokens: uncached,
    outputTokens: usage.output_tokens,
    totalTokens: usage.input_tokens + usage.output_tokens,
    ...(read > 0 && { cacheReadInputTokens: read }),
    ...(written > 0 && { cacheWriteInputTokens: written }),
  };
}

/** A Converse response. */
export function bedrockConverse(reply: WireReply): Record<string, unknown> {
  const usage = bedrockUsage(reply.usage);
  return {
    output: {
      message: {
        role: 'assistant',
        content: [
          ...(reply.thinking
            ? [
                {
                  reasoningContent: {
                    reasoningText: { text: reply.thinking.text, signature: reply.thinking.signature },
                  },
                },
              ]
            : []),
          ...(reply.text ? [{ text: reply.text }] : []),
          ...reply.tool_calls.map((call) => ({
            toolUse: { toolUseId: call.id, name: call.name, input: argsObject(call.args) },
          })),
        ],
      },
    },
    stopReason: reply.stop_reason,
    ...(usage && { usage }),
    metrics: { latencyMs: 1 },
  };
}

/** A ConverseStream's events, each an event-stream message (`eventStreamMessage`). */
export function bedrockStream(reply: WireReply): Buffer[] {
  const events: Array<[string, unknown]> = [['messageStart', { role: 'assistant' }]];
  let index = 0;
  if (reply.thinking) {
    for (const text of pieces(reply.thinking.text)) {
      events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text } } }]);
    }
    const { signature } = reply.thinking;
    events.push([
      'contentBlockDelta',
      { contentBlockIndex: index, delta: { reasoningContent: { signature } } },
    ]);
    events.push(['contentBlockStop', { contentBlockIndex: index }]);
    index++;
  }
  if (reply.text) {
    for (const text of pieces(reply.text))
      events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { text } }]);
    events.push(['contentBlockStop', { contentBlockIndex: index }]);
    index++;
  }
  for (const call of reply.tool_calls) {
    events.push([
      'contentBlockStart',
      { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id, name: call.name } } },
    ]);
    for (const input of halves(call.args)) {
      events.push(['contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input } } }]);
    }
    events.push(['contentBlockStop', { contentBlockIndex: index }]);
    index++;
  }
  events.push(['messageStop', { stopReason: reply.stop_reason }]);
  const usage = bedrockUsage(reply.usage);
  if (usage) events.push(['metadata', { usage, metrics: { latencyMs: 1 } }]);
  return events.map(([type, payload]) =>
    eventStreamMessage(
      { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' },
      payload,
    ),
  );
}

/**
 * One message of AWS's event stream (`application/vnd.amazon.eventstream`): its total and headers' lengths and
 * their CRC32, the headers (all strings here), the JSON payload, the CRC32 of all that.
 */
export function eventStreamMessage(headers: Record<string, string>, payload: unknown): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name, 'utf8');
      const valueBytes = Buffer.from(value, 'utf8');
      const header = Buffer.alloc(1 + nameBytes.length + 1 + 2 + valueBytes.length);
      let at = header.writeUInt8(nameBytes.length, 0);
      at += nameBytes.copy(header, at);
      at = header.writeUInt8(7, at); // 7: a string
      at = header.writeUInt16BE(valueBytes.length, at);
      valueBytes.copy(header, at);
      return header;
    }),
  );
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const total = 12 + headerBytes.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, headerBytes, body]);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(crc32(message), 0);
  return Buffer.concat([message, trailer]);
}
