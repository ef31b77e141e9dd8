/** The providers reached over the network, each through its LangChain.js chat model (chat-call.ts). */
import type { NetworkModelProvider } from '../../contracts/model';
import type { LangChainProvider } from './chat-call';
import { anthropicProvider } from './anthropic';
import { bedrockProvider } from './bedrock';
import { googleProvider } from './google';
import { ollamaProvider } from './ollama';
import { azureOpenAIProvider, openaiProvider } from './openai';

export const LANGCHAIN_PROVIDERS: Readonly<Record<NetworkModelProvider, LangChainProvider>> = {
  openai: openaiProvider,
  azure_openai: azureOpenAIProvider,
  anthropic: anthropicProvider,
  google: googleProvider,
  bedrock: bedrockProvider,
  ollama: ollamaProvider,
};
