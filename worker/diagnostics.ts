/**
 * What the worker side knows that `doctor` checks and that a command running a worker of its own (`run`)
 * shows before it starts one: the sandbox bash gets on this machine and the limits that bound a call, a
 * network model's endpoint and key as the model activity resolves them, and one tiny model call outside any
 * workflow. The CLI reaches activities/ through worker/ only (docs/architecture.md, the floors).
 */
import type {
  ModelCallInput,
  ModelCallResult,
  NetworkModelProvider,
  ModelSettings,
} from '../contracts/model';
import { LANGCHAIN_PROVIDERS } from '../activities/model/providers';
import type { ProviderEndpoint } from '../activities/model/chat-call';

export {
  chooseSandbox,
  describeCgroupLimits,
  machineProbes,
  type MachineProbes,
  type SandboxInUse,
} from '../activities/tools';
export { apiKeyOf, type ProviderEndpoint } from '../activities/model/chat-call';
export { ProviderError } from '../activities/model/errors';

/** Where a network model's requests go and with what key, as the model activity resolves them (or a ProviderError). */
export function modelEndpoint(
  provider: NetworkModelProvider,
  model: ModelSettings,
  env: NodeJS.ProcessEnv,
): ProviderEndpoint {
  return LANGCHAIN_PROVIDERS[provider].endpoint(model, env);
}

/** One model call outside any workflow, through the model activity's providers (loaded only now). */
export function callModelOnce(input: ModelCallInput): Promise<ModelCallResult> {
  // The model activity's machinery is not needed to read a config: loaded for a call alone.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, as the providers are
  const { ModelProviders } = require('../activities/model') as typeof import('../activities/model');
  return new ModelProviders().call(input);
}
