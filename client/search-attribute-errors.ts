/**
 * A server that does not know one of the project's search attributes refuses every start that carries it,
 * with `Namespace default has no mapping defined for search attribute UserId`: a cluster set up before the
 * attribute existed, or a dev server still running from an older version. This says what to do. It loads no
 * SDK module: the CLI knows the error before any command has loaded one.
 */
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';

export class MissingSearchAttributeError extends Error {
  override name = 'MissingSearchAttributeError';
  constructor(readonly attribute: string) {
    const type = (SEARCH_ATTRIBUTES as Record<string, string>)[attribute] ?? 'Keyword';
    super(
      `the server does not know the search attribute ${attribute}, which this project's workflows carry: ` +
        `register it once with \`temporal operator search-attribute create --name ${attribute} --type ${type}\` ` +
        '(docs/deployment.md); a dev server of `subagents dev-server` adds it when it starts again',
    );
  }
}

/** `err` as a MissingSearchAttributeError when that is what the server said, else `err` itself. */
export function explainStartFailure(err: unknown): unknown {
  // The server's words are in the gRPC error's `details`, the SDK's error its cause.
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  const details =
    typeof cause === 'object' && cause !== null && 'details' in cause ? String(cause.details) : '';
  const attribute = /has no mapping defined for search attribute (\w+)/.exec(details)?.[1];
  return attribute === undefined ? err : new MissingSearchAttributeError(attribute);
}
