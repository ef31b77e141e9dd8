/**
 * Where `subagents run` takes its prompt from: one argument, `--prompt-file FILE`, or stdin (`-`, or no
 * prompt while stdin is not a terminal). A prompt longer than one argument allows (128 KiB) needs the last two.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './flags';

/** The largest prompt read from a file or stdin: far beyond a model's context, short of exhausting memory. */
export const MAX_PROMPT_BYTES = 10 * 1024 * 1024;

const TOO_LARGE = `is over ${MAX_PROMPT_BYTES / (1024 * 1024)} MB, the most a prompt may be`;

const NO_PROMPT =
  'run: give the prompt as one argument, in quotes: subagents run "<prompt>"; or --prompt-file FILE; or on stdin (-)';
const ONE_WAY = 'run: give the prompt one way only: one argument in quotes, --prompt-file FILE, or stdin (-)';

export interface PromptSources {
  positionals: string[];
  promptFile?: string;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The prompt the command line asks for; every mistake is a UsageError (one line, exit code 2). */
export async function resolvePrompt(sources: PromptSources): Promise<string> {
  const { positionals, promptFile, stdin } = sources;
  if (positionals.length > 1 || (promptFile !== undefined && positionals.length > 0)) {
    throw new UsageError(ONE_WAY);
  }
  if (promptFile !== undefined) return readPromptFile(promptFile);
  const [argument] = positionals;
  if (argument === '-') return promptText(await readStream(stdin), 'the prompt on stdin');
  if (argument === undefined) {
    if (stdin.isTTY === true) throw new UsageError(NO_PROMPT);
    // Nothing piped in (a script's /dev/null) is a missing prompt, not an empty one.
    const bytes = await readStream(stdin);
    if (bytes.length === 0) throw new UsageError(`${NO_PROMPT} (stdin is empty)`);
    return promptText(bytes, 'the prompt on stdin');
  }
  if (argument.trim() === '')
    throw new UsageError('run: the prompt is empty (write what the lead should do)');
  return argument;
}

/** A prompt file's text: UTF-8, not empty, at most MAX_PROMPT_BYTES. */
export function readPromptFile(path: string): string {
  const where = `--prompt-file: ${JSON.stringify(path)}`;
  if (path.trim() === '') throw new UsageError(`${where} is empty (give a file, e.g. --prompt-file task.md)`);
  const file = resolve(path);
  let bytes: Buffer;
  try {
    bytes = readAtMost(file, MAX_PROMPT_BYTES + 1);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a folder, not a file'
          : `cannot be read (${(err as Error).message.split('\n')[0]})`;
    throw new UsageError(`${where} ${reason}`);
  }
  return promptText(bytes, where);
}

/** The prompt in `bytes`, or a UsageError naming `where` when it is too large, empty or not UTF-8 text. */
export function promptText(bytes: Buffer, where: string): string {
  if (bytes.length > MAX_PROMPT_BYTES) throw new UsageError(`${where} ${TOO_LARGE}`);
  let text: string;
  try {
    if (bytes.includes(0)) throw new Error('NUL byte');
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${where} is not UTF-8 text (binary data, or another encoding)`);
  }
  if (text.trim() === '') throw new UsageError(`${where} is empty (write what the lead should do)`);
  return text;
}

/**
 * The file's first `limit` bytes. Read in chunks, not by its size: a pipe (`--prompt-file <(…)`) has none,
 * and a device such as /dev/zero never ends.
 */
function readAtMost(file: string, limit: number): Buffer {
  const buffer = Buffer.alloc(limit);
  const fd = openSync(file, 'r');
  try {
    let length = 0;
    while (length < limit) {
      const read = readSync(fd, buffer, length, limit - length, null);
      if (read === 0) break;
      length += read;
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** Reads a stream to its end, stopping once it holds more than MAX_PROMPT_BYTES so a huge input is not held. */
async function readStream(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(buffer);
    length += buffer.length;
    if (length > MAX_PROMPT_BYTES) break;
  }
  return Buffer.concat(chunks);
}
