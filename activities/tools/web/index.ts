/**
 * The web tools of a worker: `web_search`, `web_fetch` and `image_search`, each served by the provider its
 * `tools:` entry names. A call's result is cut to the tool's bound (`max_chars`, else the sandbox's output cap)
 * with a marker; a refusal is an error result for the model; a transient fault is thrown for the activity's
 * retry. Keys are read from the environment at call time and appear in no result, error or log.
 */
import type { ToolEntry, WebFetchProvider, WebSearchProvider } from '../../../contracts/config/tools';
import type { ImageSearchProvider } from '../../../contracts/config/tools';
import type { ImageSearchArgs, WebFetchArgs, WebSearchArgs } from '../../../contracts/tool-specs';
import type { WebToolName } from '../../../contracts/tools';
import { capOutput } from '../output';
import { succeeded, ToolError, type ToolContext, type ToolOutput } from '../tool-context';
import {
  isNonPublicAddress,
  systemLookup,
  WebRefusal,
  type AddressPolicy,
  type HostLookup,
} from './addresses';
import { WEB_FETCH } from './fetch';
import { IMAGE_SEARCH } from './images';
import type { WebCallContext } from './provider-http';
import { WEB_SEARCH } from './search';

export { isNonPublicAddress, type AddressPolicy, type HostLookup } from './addresses';

export interface WebToolDeps {
  /** The worker's `tools:` entries (absent: no web tool is configured). */
  entries?: readonly ToolEntry[];
  /** Where keys are read (default: the process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** How host names resolve for a direct fetch (default: `dns.lookup`, every address). */
  lookup?: HostLookup;
  /** Which addresses a direct fetch refuses (default: the non-public ones). */
  refused?: AddressPolicy;
}

type Run<A> = (args: A, ctx: ToolContext) => Promise<ToolOutput>;

export interface WebTools {
  web_search: Run<WebSearchArgs>;
  web_fetch: Run<WebFetchArgs>;
  image_search: Run<ImageSearchArgs>;
}

/** The web tools over these entries. */
export function createWebTools(deps: WebToolDeps): WebTools {
  const entryOf = (name: WebToolName): ToolEntry => {
    const entry = deps.entries?.find((candidate) => candidate.name === name);
    if (entry === undefined) {
      throw new ToolError(
        `${name} is not configured on this worker (its config has no tools: entry named ${name})`,
      );
    }
    return entry;
  };
  const context = (entry: ToolEntry, ctx: ToolContext): WebCallContext => ({
    entry,
    env: deps.env ?? process.env,
    ...(ctx.signal && { signal: ctx.signal }),
    outputCap: entry.max_chars ?? ctx.sandbox.output_cap_chars,
    lookup: deps.lookup ?? systemLookup,
    refused: deps.refused ?? isNonPublicAddress,
  });
  const run =
    <A>(
      name: WebToolName,
      pick: (entry: ToolEntry) => ((args: A, ctx: WebCallContext) => Promise<string>) | undefined,
    ): Run<A> =>
    async (args, ctx) => {
      const entry = entryOf(name);
      const provider = pick(entry);
      if (provider === undefined)
        throw new ToolError(`${name}: provider ${entry.provider} is not available here`);
      const call = context(entry, ctx);
      try {
        return succeeded(capOutput(await provider(args, call), call.outputCap));
      } catch (err) {
        if (err instanceof WebRefusal) throw new ToolError(`${name}: ${err.message}`);
        throw err;
      }
    };
  return {
    web_search: run('web_search', (entry) => WEB_SEARCH[entry.provider as WebSearchProvider]),
    web_fetch: run('web_fetch', (entry) => WEB_FETCH[entry.provider as WebFetchProvider]),
    image_search: run('image_search', (entry) => IMAGE_SEARCH[entry.provider as ImageSearchProvider]),
  };
}
