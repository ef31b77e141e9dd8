/**
 * `subagents codec-server [--port N]`: the Web UI's codec endpoint over the configured payload store, for a
 * UI this process did not start (a cluster's, Temporal Cloud's, or `temporal server start-dev`).
 */
import { DEFAULT_CODEC_SERVER_PORT } from '../contracts/config/payloads';
import { codecHttpOptions, startCodecServer } from '../payloads/codec-server';
import { projectCodec } from '../payloads/data-converter';
import { payloadStore } from '../payloads/store';
import { untilShutdownRequested } from '../worker/shutdown';
import { loadCommandConfig } from './command-setup';
import { integerFlag, parseFlags, UsageError } from './flags';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** The origin of temporal.ui_url, which may call the endpoint without being listed again. */
function uiOrigin(uiUrl: string | undefined): string[] {
  if (uiUrl === undefined) return [];
  try {
    return [new URL(uiUrl).origin];
  } catch {
    return [];
  }
}

/** Who may call the endpoint and what it serves, so a refused UI page or a 401 is no surprise. */
function accessLine(
  origins: readonly string[],
  encode: boolean,
  tokenSource: string | undefined,
  tokenEnv: string,
): string {
  const pages = origins.length
    ? origins.join(', ')
    : 'none (payloads.codec_server.allowed_origins or temporal.ui_url add one)';
  const token = tokenSource ? `required (${tokenSource})` : `none ($${tokenEnv} is unset)`;
  return (
    `Web UI pages allowed: ${pages}; /encode ${encode ? 'on' : 'off (payloads.codec_server.allow_encode)'}; ` +
    `bearer token: ${token}.`
  );
}

export async function codecServerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { port: { type: 'string' } }, 'codec-server');
  if (positionals.length > 0)
    throw new UsageError(`codec-server: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  const port =
    integerFlag(values, 'port', 1, 65535) ?? config.payloads.codec_server.port ?? DEFAULT_CODEC_SERVER_PORT;
  const codecSettings = config.payloads.codec_server;
  const http = codecHttpOptions(codecSettings);
  const allowedOrigins = [...codecSettings.allowed_origins, ...uiOrigin(config.temporal.ui_url)];
  const server = await startCodecServer({
    codec: projectCodec(),
    port,
    ...http,
    allowedOrigins,
  });
  try {
    say(
      `Codec endpoint ${server.url} over the ${payloadStore().description} (Ctrl-C to stop). ` +
        `Give it to the Web UI (its codec server setting, or --ui-codec-endpoint) and the CLI (--codec-endpoint).`,
    );
    say(accessLine(allowedOrigins, http.allowEncode === true, http.tokenSource, codecSettings.token_env));
    process.stdout.write(`${JSON.stringify({ codec_endpoint: server.url })}\n`);
    await untilShutdownRequested(say);
    return 0;
  } finally {
    await server.close();
  }
}
