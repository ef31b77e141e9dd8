/**
 * `subagents memory show|forget|clear --user U`: a user's memory (the facts their lead runs stored, kept by the
 * user's memory workflow `memory/<user_id>`). `show` lists them (`--json`: the facts alone), `forget <fact-id>`
 * removes one, `clear` removes them all. The user is `--user`, else `lead.user_id`, else `default`.
 */
import type { MemoryFact } from '../contracts/memory';
import { DEFAULT_USER_ID } from '../contracts/user';
import { connectClient } from '../client/connection';
import { clearMemory, forgetFact, memoryFacts } from '../client/memory';
import { loadCommandConfig, requireServer } from './command-setup';
import { parseFlags, UsageError } from './flags';
import { checkedUser, tableLines } from './visibility-listing';

const USAGE = 'memory show|forget <fact-id>|clear [--user U] [--json]';

/** The facts as a table, most confident first. */
export function renderFacts(userId: string, facts: readonly MemoryFact[]): string[] {
  if (facts.length === 0) return [`(user ${userId} has no memory)`];
  const sorted = [...facts].sort((a, b) => b.confidence - a.confidence);
  const rows = sorted.map((fact) => [
    fact.id,
    fact.category,
    fact.confidence.toFixed(2),
    fact.content,
    fact.source_run,
    fact.updated_at,
  ]);
  return tableLines(['FACT', 'CATEGORY', 'CONFIDENCE', 'CONTENT', 'SOURCE RUN', 'UPDATED'], rows, [2]);
}

export async function memoryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { user: { type: 'string' } }, 'memory');
  const [action, ...rest] = positionals;
  const expected = action === 'forget' ? 1 : 0;
  if (!['show', 'forget', 'clear'].includes(action ?? '') || rest.length !== expected) {
    throw new UsageError(`memory: ${USAGE}`);
  }
  const config = loadCommandConfig(values);
  const userId = checkedUser(config.lead.user_id) ?? DEFAULT_USER_ID;
  const settings = await requireServer('memory', config);
  const { client, connection } = await connectClient(settings);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  try {
    if (action === 'show') {
      const facts = await memoryFacts(client, userId);
      out(values.json ? JSON.stringify(facts, null, 2) : renderFacts(userId, facts).join('\n'));
      return 0;
    }
    if (action === 'clear') {
      const count = await clearMemory(client, userId);
      out(
        values.json
          ? JSON.stringify({ user_id: userId, cleared: count })
          : `user ${userId}: ${count} facts forgotten`,
      );
      return 0;
    }
    const factId = rest[0];
    const result = await forgetFact(client, userId, factId);
    const error =
      result === undefined ? `user ${userId} has no memory` : 'error' in result ? result.error : undefined;
    if (values.json) out(JSON.stringify(result ?? { error }));
    else out(error ?? `user ${userId}: ${factId} forgotten`);
    return error === undefined ? 0 : 1;
  } finally {
    await connection.close();
  }
}
