/**
 * The `bedrock` model provider: Amazon Bedrock's Converse API, streamed (ConverseStream, AWS's binary event
 * stream), through LangChain's ChatBedrockConverse (DeerFlow's `langchain_aws:ChatBedrockConverse`).
 *
 * Credentials, in this order, and never from an instance's metadata endpoint (the SDK's default chain would
 * ask it, from any machine, and wait on it where there is none): a Bedrock API key (`api_key`, default
 * AWS_BEARER_TOKEN_BEDROCK), the standard variables AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, a profile of the shared credentials files (`aws_profile`, DeerFlow's
 * `credentials_profile_name`, or AWS_PROFILE). The region: `region` (DeerFlow's `region_name`), else
 * AWS_REGION / AWS_DEFAULT_REGION. `base_url` (DeerFlow's `endpoint_url`) replaces the regional endpoint
 * (a VPC endpoint, a proxy).
 */
import { dirname } from 'node:path';
import type * as LangChainAws from '@langchain/aws';
import type * as BedrockRuntime from '@aws-sdk/client-bedrock-runtime';
import type { ModelSettings } from '../../contracts/model';
import { loadOptional } from '../../payloads/optional-packages';
import {
  apiKeyOf,
  contentBlocksOf,
  finishReasonFrom,
  missingSetting,
  withTools,
  type AwsCredentials,
  type LangChainProvider,
} from './chat-call';
import { mergeConsecutiveUserTurns, toLangChainMessages } from './langchain-messages';
import { classifyProviderError } from './provider-errors';

/** Bedrock's stop reasons in the contract's words (`max_tokens` it reads as it is). */
const STOP_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  model_context_window_exceeded: 'length',
};

function langChainAws(): typeof LangChainAws {
  return loadOptional(
    'the bedrock model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/aws') as typeof LangChainAws,
  );
}

/** A package of the AWS SDK, the copy @langchain/aws itself uses (and its client's own, `from` it). */
function awsSdk<T>(name: string, from = '@langchain/aws'): T {
  return loadOptional('the bedrock model provider', () => {
    const beside = dirname(require.resolve(from === '@langchain/aws' ? from : awsPath(from)));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, and resolved from @langchain/aws
    return require(require.resolve(name, { paths: [beside] })) as T;
  });
}

function awsPath(name: string): string {
  return require.resolve(name, { paths: [dirname(require.resolve('@langchain/aws'))] });
}

type HttpHandlers = { NodeHttpHandler: new (options?: object) => unknown };

type CredentialSource =
  | { kind: 'bearer'; token: string }
  | { kind: 'keys'; credentials: AwsCredentials }
  | { kind: 'profile'; profile: string };

function credentialSource(
  settings: ModelSettings,
  env: NodeJS.ProcessEnv,
  apiKey: string | undefined,
): CredentialSource | undefined {
  if (apiKey) return { kind: 'bearer', token: apiKey };
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    return {
      kind: 'keys',
      credentials: {
        accessKeyId: env.AWS_ACCESS_KEY_ID,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
        ...(env.AWS_SESSION_TOKEN && { sessionToken: env.AWS_SESSION_TOKEN }),
      },
    };
  }
  const profile = settings.aws_profile ?? env.AWS_PROFILE;
  return profile ? { kind: 'profile', profile } : undefined;
}

function regionOf(settings: ModelSettings, env: NodeJS.ProcessEnv): string | undefined {
  return settings.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
}

export const bedrockProvider: LangChainProvider = {
  endpoint(settings, env) {
    if (regionOf(settings, env) === undefined) {
      throw missingSetting(settings, 'no AWS region', 'set region (region_name) in the model, or AWS_REGION');
    }
    const { key } = apiKeyOf(settings, env);
    const source = credentialSource(settings, env, key);
    if (source === undefined) {
      throw missingSetting(
        settings,
        'no AWS credentials',
        'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK, or ' +
          'aws_profile (credentials_profile_name); an instance role is not read',
      );
    }
    return {
      baseUrl: settings.base_url || undefined,
      apiKey: source.kind === 'bearer' ? source.token : undefined,
      ...(source.kind === 'keys' && { aws: source.credentials }),
    };
  },
  chatCall(input, { baseUrl, apiKey, aws }) {
    const settings = input.model;
    const region = regionOf(settings, process.env) as string;
    const endpoint = baseUrl ?? `Bedrock in ${region}`;
    return {
      endpoint,
      chatModel: () => {
        const { ChatBedrockConverse } = langChainAws();
        const { BedrockRuntimeClient } = awsSdk<typeof BedrockRuntime>('@aws-sdk/client-bedrock-runtime');
        const credentials =
          aws ??
          (apiKey === undefined
            ? awsSdk<{
                fromIni(init: { profile: string }): AwsCredentials | (() => Promise<AwsCredentials>);
              }>('@aws-sdk/credential-provider-ini').fromIni({
                profile: settings.aws_profile ?? (process.env.AWS_PROFILE as string),
              })
            : undefined);
        const { NodeHttpHandler } = awsSdk<HttpHandlers>(
          '@smithy/node-http-handler',
          '@aws-sdk/client-bedrock-runtime',
        );
        const client = new BedrockRuntimeClient({
          region,
          // HTTP/1.1, as boto3 speaks it: the client's default HTTP/2 is for the bidirectional streams only, and
          // cannot reach an endpoint without TLS (a proxy, a local server).
          requestHandler: new NodeHttpHandler(),
          ...(baseUrl && { endpoint: baseUrl }),
          ...(apiKey !== undefined
            ? { token: async () => ({ token: apiKey }), authSchemePreference: ['httpBearerAuth'] }
            : { credentials }),
          // Retries belong to Temporal, never to the client inside one attempt.
          maxAttempts: 1,
        } as BedrockRuntime.BedrockRuntimeClientConfig);
        const chat = new ChatBedrockConverse({
          client,
          region,
          model: settings.model,
          temperature: settings.temperature,
          maxTokens: settings.max_tokens,
          ...(settings.thinking && { additionalModelRequestFields: { thinking: settings.thinking } }),
          // Not used (the client above signs), but ChatBedrockConverse would otherwise build the SDK's default
          // chain, metadata endpoint included.
          credentials: aws ?? { accessKeyId: 'unused', secretAccessKey: 'unused' },
          maxRetries: 0,
          streamUsage: true,
        });
        return withTools(chat, input.tools);
      },
      // Converse refuses two user turns in a row (tool results, then a note to the model).
      messages: mergeConsecutiveUserTurns(toLangChainMessages(input.messages, 'parsed', 'bedrock')),
      // A Claude model's reasoning goes back with its turn, as on Anthropic's own API.
      blocksToKeep: (reply) => contentBlocksOf(reply, ['reasoning', 'reasoning_content']),
      stream: true,
      finishReason: (reply) => {
        const stop = reply.response_metadata.messageStop as { stopReason?: unknown } | undefined;
        return finishReasonFrom(stop?.stopReason ?? reply.response_metadata.stopReason, STOP_REASONS);
      },
      classify: (err) => classifyProviderError(err, endpoint),
    };
  },
};
