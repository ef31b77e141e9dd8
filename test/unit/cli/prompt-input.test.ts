import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseFlags, PROMPT_FLAGS, RUN_FLAGS, UsageError } from '../../../cli/flags';
import { MAX_PROMPT_BYTES, promptText, readPromptFile, resolvePrompt } from '../../../cli/prompt-input';

/** A stdin that is a pipe (not a terminal) holding `text`, or a terminal when `text` is undefined. */
function stdin(text?: string): Readable & { isTTY?: boolean } {
  const stream: Readable & { isTTY?: boolean } = Readable.from(text === undefined ? [] : [Buffer.from(text)]);
  if (text === undefined) stream.isTTY = true;
  return stream;
}

describe('the run prompt', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prompt-input-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function write(name: string, content: string | Buffer): string {
    const file = join(dir, name);
    writeFileSync(file, content);
    return file;
  }

  it('takes one argument as it is', async () => {
    await expect(resolvePrompt({ positionals: ['Count the files.'], stdin: stdin() })).resolves.toBe(
      'Count the files.',
    );
  });

  it('reads --prompt-file, longer than one argument may be', async () => {
    const long = `${'x'.repeat(200 * 1024)} — done`;
    const { values, positionals } = parseFlags(['--prompt-file', write('task.md', long)], {
      ...RUN_FLAGS,
      ...PROMPT_FLAGS,
    });
    const prompt = await resolvePrompt({
      positionals,
      promptFile: values['prompt-file'] as string,
      stdin: stdin(),
    });
    expect(prompt).toBe(long);
  });

  it('reads stdin for `-`, and when no prompt is given and stdin is not a terminal', async () => {
    await expect(resolvePrompt({ positionals: ['-'], stdin: stdin('from a pipe\n') })).resolves.toBe(
      'from a pipe\n',
    );
    await expect(resolvePrompt({ positionals: [], stdin: stdin('piped') })).resolves.toBe('piped');
  });

  it('refuses two prompts, or none at a terminal, in one line', async () => {
    const oneWay = /^run: give the prompt one way only: one argument in quotes, --prompt-file FILE, or stdin/;
    const file = write('task.md', 'x');
    await expect(resolvePrompt({ positionals: ['a', 'b'], stdin: stdin() })).rejects.toThrow(oneWay);
    await expect(resolvePrompt({ positionals: ['a'], promptFile: file, stdin: stdin() })).rejects.toThrow(
      oneWay,
    );
    await expect(resolvePrompt({ positionals: ['-'], promptFile: file, stdin: stdin() })).rejects.toThrow(
      oneWay,
    );
    const none =
      'run: give the prompt as one argument, in quotes: subagents run "<prompt>"; or --prompt-file FILE';
    await expect(resolvePrompt({ positionals: [], stdin: stdin() })).rejects.toThrow(UsageError);
    await expect(resolvePrompt({ positionals: [], stdin: stdin() })).rejects.toThrow(none);
    await expect(resolvePrompt({ positionals: [], stdin: stdin('') })).rejects.toThrow(
      `${none}; or on stdin (-) (stdin is empty)`,
    );
    await expect(resolvePrompt({ positionals: ['-'], stdin: stdin(' \n') })).rejects.toThrow(
      'the prompt on stdin is empty',
    );
    await expect(resolvePrompt({ positionals: ['  '], stdin: stdin() })).rejects.toThrow(
      'run: the prompt is empty',
    );
  });

  it('refuses a missing, folder, empty, binary or non-UTF-8 prompt file, naming it', () => {
    const missing = join(dir, 'nope.md');
    expect(() => readPromptFile(missing)).toThrow(`--prompt-file: ${JSON.stringify(missing)} does not exist`);
    expect(() => readPromptFile(dir)).toThrow('is a folder, not a file');
    expect(() => readPromptFile('')).toThrow('--prompt-file: "" is empty (give a file');
    expect(() => readPromptFile(write('blank.md', ' \n\t'))).toThrow(
      'is empty (write what the lead should do)',
    );
    expect(() => readPromptFile(write('nul.bin', Buffer.from([0x68, 0x00, 0x69])))).toThrow(
      'is not UTF-8 text',
    );
    expect(() => readPromptFile(write('latin1.md', Buffer.from('r\xe9sum\xe9', 'latin1')))).toThrow(
      'is not UTF-8 text',
    );
    for (const problem of [missing, dir, '']) {
      expect(() => readPromptFile(problem)).toThrow(UsageError);
    }
  });

  it('refuses a prompt over the cap, from a file or a stream', async () => {
    const big = Buffer.alloc(MAX_PROMPT_BYTES + 1, 'a');
    expect(() => readPromptFile(write('big.md', big))).toThrow('is over 10 MB, the most a prompt may be');
    expect(() => promptText(big, 'the prompt on stdin')).toThrow('the prompt on stdin is over 10 MB');
    await expect(resolvePrompt({ positionals: ['-'], stdin: stdin(big.toString()) })).rejects.toThrow(
      'the prompt on stdin is over 10 MB',
    );
    expect(promptText(Buffer.alloc(MAX_PROMPT_BYTES, 'a'), 'x')).toHaveLength(MAX_PROMPT_BYTES);
  });

  it('reads a prompt file in bounded chunks: a device that never ends is over the cap', () => {
    expect(() => readPromptFile('/dev/zero')).toThrow('--prompt-file: "/dev/zero" is over 10 MB');
  });

  it('keeps a UTF-8 byte order mark out of the prompt', () => {
    expect(readPromptFile(write('bom.md', Buffer.from('\ufeffhello', 'utf8')))).toBe('hello');
  });
});
