/**
 * Runs the scriptable A2A agent (./a2a-agent.ts) as its own process, for end-to-end tests whose workers are
 * killed while a remote task runs (the agent must outlive them):
 *
 *   node a2a-agent-main.js [--port N] [--script script.json] [--no-streaming] [--transport JSONRPC|HTTP+JSON]
 *                          [--token TOKEN]
 *
 * `--script` is a JSON file `{"script"?: [{"keyword", "behaviour"}, …], "queue"?: [behaviour, …]}` (the
 * A2AAgentOptions of the same names). Prints one JSON line once it listens:
 *
 *   {"url": "http://127.0.0.1:N", "card_url": "…/.well-known/agent-card.json", "stats_url": "…/_test/stats"}
 *
 * then serves until SIGTERM/SIGINT. A test reads what arrived with `GET <url>/_test/stats` (or
 * `fetchA2AStats(url)`), lets held tasks finish with `POST <url>/_test/release` and adds behaviours with
 * `POST <url>/_test/queue`.
 */
import { readFileSync } from 'node:fs';
import { A2AAgent, type A2AAgentOptions, type A2ABehaviour, type A2AScriptEntry } from './a2a-agent';
import { eachFlag, portValue, serveUntilSignalled } from './server-process';

function parseArgs(argv: string[]): A2AAgentOptions {
  const options: A2AAgentOptions = {};
  eachFlag(argv, (flag, value) => {
    if (flag === '--port') {
      options.port = portValue(flag, value());
    } else if (flag === '--script') {
      const file = value();
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error(`--script ${file}: expected a JSON object with "script" and/or "queue"`);
      const { script, queue } = parsed as { script?: unknown; queue?: unknown };
      if (script !== undefined && !Array.isArray(script))
        throw new Error(`--script ${file}: "script" is not a list of {keyword, behaviour}`);
      if (queue !== undefined && !Array.isArray(queue))
        throw new Error(`--script ${file}: "queue" is not a list of behaviours`);
      if (script !== undefined) options.script = script as A2AScriptEntry[];
      if (queue !== undefined) options.queue = queue as A2ABehaviour[];
    } else if (flag === '--no-streaming') {
      options.streaming = false;
    } else if (flag === '--transport') {
      const transport = value();
      if (transport !== 'JSONRPC' && transport !== 'HTTP+JSON')
        throw new Error(`--transport: ${transport} is not a transport (JSONRPC, HTTP+JSON)`);
      options.transport = transport;
    } else if (flag === '--token') {
      options.token = value();
    } else {
      throw new Error(
        `unknown argument ${flag} (accepted: --port, --script, --no-streaming, --transport, --token)`,
      );
    }
  });
  return options;
}

serveUntilSignalled('a2a-agent', async () => {
  const agent = await A2AAgent.start(parseArgs(process.argv.slice(2)));
  return {
    line: { url: agent.url, card_url: agent.cardUrl, stats_url: `${agent.url}/_test/stats` },
    close: () => agent.close(),
  };
});
