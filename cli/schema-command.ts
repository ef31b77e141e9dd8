/** `subagents schema lead-input`: the JSON Schema of a lead run's input, for clients in other languages. */
import { leadRunInputJsonSchema } from '../contracts/lead-input-json-schema';
import { parseFlags, UsageError } from './flags';

const SCHEMAS: Record<string, () => Record<string, unknown>> = {
  'lead-input': leadRunInputJsonSchema,
};

export async function schemaCommand(args: string[]): Promise<number> {
  const { positionals } = parseFlags(args, {}, 'schema');
  const [name, extra] = positionals;
  const known = Object.keys(SCHEMAS).join(', ');
  if (name === undefined) throw new UsageError(`schema: which one? (${known})`);
  if (extra !== undefined) throw new UsageError(`schema: unexpected argument ${JSON.stringify(extra)}`);
  const schema = SCHEMAS[name];
  if (!schema) throw new UsageError(`schema: no schema ${JSON.stringify(name)} (${known})`);
  process.stdout.write(`${JSON.stringify(schema(), null, 2)}\n`);
  return 0;
}
