/**
 * `subagents serve [--port N] [--host H] [--user-header NAME]`: the tree's live stream over HTTP and the page
 * for people (docs/live.md): `GET /runs/<lead run id>/stream` (Server-Sent Events: the backlog, then live),
 * the page at `/` and `/runs/<id>`, its inbox and decisions. Talks to the server `--address` names, as every
 * command does; reads the stream from the config's `stream_bridge`.
 */
import { SubagentsClient } from '../client/api';
import { connectClient } from '../client/connection';
import { parseServeTokens, startLiveServer } from '../client/live-server';
import { processStreamBridge } from '../payloads/stream/bridge';
import { untilShutdownRequested } from '../worker/shutdown';
import { loadCommandConfig, requireServer } from './command-setup';
import { integerFlag, parseFlags, stringFlag, UsageError } from './flags';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** Where the bearer tokens are read from: `name:token,name:token`. */
export const SERVE_TOKENS_ENV = 'SUBAGENTS_SERVE_TOKENS';
export const DEFAULT_SERVE_PORT = 8090;

export async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { port: { type: 'string' }, host: { type: 'string' }, 'user-header': { type: 'string' } },
    'serve',
  );
  if (positionals.length > 0)
    throw new UsageError(`serve: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  const settings = await requireServer('serve', config);
  const port = integerFlag(values, 'port', 0, 65535) ?? DEFAULT_SERVE_PORT;
  const tokens = parseServeTokens(process.env[SERVE_TOKENS_ENV]);
  const userHeader = stringFlag(values, 'user-header');
  const { client, connection } = await connectClient(settings);
  try {
    const server = await startLiveServer({
      client: new SubagentsClient(client, settings.namespace),
      port,
      ...(stringFlag(values, 'host') !== undefined && { host: stringFlag(values, 'host') }),
      ...(tokens.size > 0 && { tokens }),
      ...(userHeader !== undefined && { userHeader }),
      log: say,
    });
    try {
      say(
        `Live page and streams at ${server.url} (GET /runs/<run id>/stream) over ${processStreamBridge().description}; ` +
          `Temporal at ${settings.address}. Ctrl-C to stop.`,
      );
      const who =
        tokens.size > 0
          ? `bearer tokens of ${[...new Set(tokens.values())].join(', ')} ($${SERVE_TOKENS_ENV})`
          : userHeader !== undefined
            ? `the proxy's ${userHeader} header`
            : `nobody ($${SERVE_TOKENS_ENV} is unset): the page watches, it cannot decide`;
      say(`Who may approve, deny and answer: ${who}.`);
      process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
      await untilShutdownRequested(say);
      return 0;
    } finally {
      await server.close();
    }
  } finally {
    await connection.close();
  }
}
