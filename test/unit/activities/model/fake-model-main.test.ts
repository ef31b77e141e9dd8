import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { FakeReply, RecordedRequest } from '../../../support/fake-openai';
import { tempDir } from './fixtures';

const MAIN = join(__dirname, '..', '..', '..', '..', 'test', 'support', 'fake-model-main.js');

describe('fake OpenAI server as a process', () => {
  it('prints its URL as one JSON line, serves the given replies, and exits cleanly on SIGTERM', async () => {
    const replies: FakeReply[] = [{ content: 'from the file', usage: { input_tokens: 3, output_tokens: 2 } }];
    const repliesFile = join(tempDir(), 'replies.json');
    writeFileSync(repliesFile, JSON.stringify(replies));
    const child = spawn(process.execPath, [MAIN, '--replies', repliesFile], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const { url } = JSON.parse(line) as { url: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

      const response = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = (await response.json()) as {
        choices: Array<{ message: { content: string } }>;
        usage: unknown;
      };
      expect(body.choices[0].message.content).toBe('from the file');
      expect(body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });

      const recorded = (await (await fetch(new URL('/_fake/requests', url))).json()) as RecordedRequest[];
      expect(recorded.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
