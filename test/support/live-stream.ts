/**
 * What the live-stream tests share: a three-part run whose subagents each write a file and then answer in
 * words that stream, a file stream bridge of the test's own, and an SSE reader over `fetch`.
 */
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { StreamEvent } from '../../contracts/stream';
import { FileStreamBridge } from '../../payloads/stream/file-bridge';
import { DEFAULT_STREAM_BRIDGE_SETTINGS } from '../../contracts/config/stream-bridge';
import { tempDir } from './subagent-input';
import { StreamTexts } from '../../client/stream-text';

export const PARTS = ['part0', 'part1', 'part2'] as const;
export const partAnswer = (id: string) => `Part ${id} is written down in ${id}.txt and checked twice over.`;
export const LEAD_ANSWER = 'All three parts are done, each written to its own file.';

/** The lead delegates the three parts at once; each part writes its file, then answers in words (`childMs`). */
export function threePartScript(
  childMs: number,
  leadTurns?: ModelScriptFileInput['scripts'][number]['turns'],
) {
  const script: ModelScriptFileInput = {
    scripts: [
      {
        agent: 'lead',
        turns: leadTurns ?? [
          {
            tool_calls: PARTS.map((id) => ({
              name: 'task',
              id,
              args: { description: `Part ${id}`, prompt: `Do part ${id}.`, subagent_type: 'general-purpose' },
            })),
          },
          { content: LEAD_ANSWER, delay_ms: 200 },
        ],
      },
      ...PARTS.map((id) => ({
        agent: 'general-purpose',
        prompt_contains: `Do part ${id}.`,
        turns: [
          {
            tool_calls: [
              { name: 'write_file', id: `w_${id}`, args: { path: `${id}.txt`, content: `notes of ${id}` } },
            ],
          },
          { content: partAnswer(id), delay_ms: childMs },
        ],
      })),
    ],
  };
  return script;
}

/** A file bridge in a folder of the test's own. */
export function testFileBridge(label: string): FileStreamBridge {
  return new FileStreamBridge(tempDir(`stream-${label}`), DEFAULT_STREAM_BRIDGE_SETTINGS);
}

export interface SseRead {
  contentType: string;
  /** Each frame's id (absent: '') and event, in order; `end` frames are left out. */
  frames: Array<{ id: string; event: StreamEvent }>;
}

/**
 * Reads `url`'s Server-Sent Events until the server's `end` frame (or `until` says enough), calling `onEvent`
 * with each as it comes.
 */
export async function readSse(
  url: string,
  options: {
    headers?: Record<string, string>;
    onEvent?: (event: StreamEvent) => void;
    until?: (event: StreamEvent) => boolean;
  } = {},
): Promise<SseRead> {
  const stop = new AbortController();
  const response = await fetch(url, { headers: options.headers ?? {}, signal: stop.signal });
  if (!response.ok || response.body === null) throw new Error(`GET ${url}: ${response.status}`);
  const frames: SseRead['frames'] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut = buffer.indexOf('\n\n');
      while (cut >= 0) {
        const frame = parseFrame(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (frame === 'end') return { contentType: response.headers.get('content-type') ?? '', frames };
        if (frame !== undefined) {
          frames.push(frame);
          options.onEvent?.(frame.event);
          if (options.until?.(frame.event))
            return { contentType: response.headers.get('content-type') ?? '', frames };
        }
        cut = buffer.indexOf('\n\n');
      }
    }
    return { contentType: response.headers.get('content-type') ?? '', frames };
  } finally {
    stop.abort();
  }
}

function parseFrame(text: string): { id: string; event: StreamEvent } | 'end' | undefined {
  let id = '';
  let data = '';
  let kind = 'message';
  for (const line of text.split('\n')) {
    if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('event: ')) kind = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (kind === 'end') return 'end';
  if (kind !== 'message' || data === '') return undefined;
  return { id, event: JSON.parse(data) as StreamEvent };
}

/** The text an agent's stream adds up to: its deltas, each turn's dropped when a retry superseded it. */
export function streamedText(events: readonly StreamEvent[], path: string): string {
  const texts = new StreamTexts();
  for (const event of events) texts.add(event);
  return texts.text(path);
}
