/**
 * Runs the fake Chat Completions server as its own process, for end-to-end tests that start the CLI as a
 * child process:
 *
 *   node fake-openai-main.js [--port N] [--replies replies.json] [--no-stream] [--api-key KEY]
 *
 * Prints `{"url": "http://127.0.0.1:N/v1"}` as one JSON line once it listens, then serves until SIGTERM/SIGINT.
 * `--replies` is a JSON array of FakeReply served in order; after it, each request gets a short echo answer.
 * `GET /_fake/requests` returns every request received so far.
 */
import { readFileSync } from 'node:fs';
import { FakeOpenAI, type FakeOpenAIOptions, type FakeReply } from './fake-openai';

function parseArgs(argv: string[]): FakeOpenAIOptions {
  const options: FakeOpenAIOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    if (flag === '--port') {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new Error(`--port: ${argv[i]} is not a port (0–65535)`);
      options.port = port;
    } else if (flag === '--replies') {
      const file = value();
      const replies: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (!Array.isArray(replies)) throw new Error(`--replies ${file}: expected a JSON array of replies`);
      options.replies = replies as FakeReply[];
    } else if (flag === '--no-stream') {
      options.streaming = false;
    } else if (flag === '--api-key') {
      options.api_key = value();
    } else {
      throw new Error(`unknown argument ${flag} (accepted: --port, --replies, --no-stream, --api-key)`);
    }
  }
  return options;
}

async function main(): Promise<void> {
  const fake = await FakeOpenAI.start(parseArgs(process.argv.slice(2)));
  process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
  const stop = (): void => {
    fake.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`fake-openai: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
