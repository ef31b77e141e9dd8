/**
 * Runs a fake model provider (the Chat Completions one by default) as its own process, for end-to-end tests
 * that start the CLI as a child process and benchmarks that want the endpoint apart from the worker:
 *
 *   node fake-model-main.js [--provider openai|azure_openai|anthropic|google|bedrock|ollama] [--port N]
 *                           [--replies replies.json] [--no-stream] [--api-key KEY]
 *                           [--outage-seconds S [--outage-status 500] [--retry-after SECONDS]]
 *
 * Prints `{"url": "…"}` as one JSON line once it listens (the `base_url` a model of that provider is configured
 * with: `http://127.0.0.1:N/v1` for openai, the server's root for the others), then serves until SIGTERM/SIGINT.
 * `--replies` is a JSON array of FakeReply served in order; after it, each request gets a short echo answer.
 * `--outage-seconds` answers every chat request with an error (HTTP 500 unless `--outage-status`, with a
 * `Retry-After` header when `--retry-after` is given) for that long after start, then serves as usual.
 * `GET /_fake/requests` returns every request received so far.
 */
import { readFileSync } from 'node:fs';
import type { NetworkModelProvider } from '../../contracts/model';
import type { FakeOutage, FakeReply, FakeServerOptions } from './fake-model-server';
import { NETWORK_PROVIDERS, startProviderFake } from './fake-providers';
import { eachFlag, portValue, serveUntilSignalled } from './server-process';

function parseArgs(argv: string[]): FakeServerOptions<never> & { provider: NetworkModelProvider } {
  const options: FakeServerOptions<never> & { provider: NetworkModelProvider } = { provider: 'openai' };
  let outageSeconds: number | undefined;
  const outage: Omit<FakeOutage, 'until'> = {};
  eachFlag(argv, (flag, value) => {
    if (flag === '--provider') {
      const provider = value() as NetworkModelProvider;
      if (!NETWORK_PROVIDERS.includes(provider))
        throw new Error(`--provider: ${provider} is not a provider (${NETWORK_PROVIDERS.join(', ')})`);
      options.provider = provider;
    } else if (flag === '--port') {
      options.port = portValue(flag, value());
    } else if (flag === '--replies') {
      const file = value();
      const replies: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (!Array.isArray(replies)) throw new Error(`--replies ${file}: expected a JSON array of replies`);
      options.replies = replies as FakeReply[];
    } else if (flag === '--no-stream') {
      options.streaming = false;
    } else if (flag === '--api-key') {
      options.api_key = value();
    } else if (flag === '--outage-seconds') {
      const text = value();
      outageSeconds = Number(text);
      if (!(outageSeconds > 0)) throw new Error(`--outage-seconds: ${text} is not a number of seconds (> 0)`);
    } else if (flag === '--outage-status') {
      const text = value();
      const status = Number(text);
      if (!Number.isInteger(status) || status < 400 || status > 599)
        throw new Error(`--outage-status: ${text} is not an HTTP error status (400–599)`);
      outage.status = status;
    } else if (flag === '--retry-after') {
      outage.retry_after = value();
    } else {
      throw new Error(
        `unknown argument ${flag} (accepted: --provider, --port, --replies, --no-stream, --api-key, --outage-seconds, ` +
          `--outage-status, --retry-after)`,
      );
    }
  });
  if (outageSeconds !== undefined) options.outage = { ...outage, until: Date.now() + outageSeconds * 1000 };
  else if (Object.keys(outage).length > 0)
    throw new Error('--outage-status and --retry-after need --outage-seconds');
  return options;
}

serveUntilSignalled('fake-model', async () => {
  const { provider, ...options } = parseArgs(process.argv.slice(2));
  // The key is checked only when given (the process's callers pass it as they configure the model).
  const fake = await startProviderFake(provider, { api_key: undefined, ...options });
  return { line: { url: fake.model().base_url }, close: () => fake.server.close() };
});
