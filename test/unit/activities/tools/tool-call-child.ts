/**
 * Runs one tool call in a process of its own and prints the result as JSON: for tests that need the tool to
 * run under another user or in a private mount namespace. Argument: `{"workspace", "name", "args"}` as JSON.
 */
import { callTool } from './workspace-fixture';

interface ChildCall {
  workspace: string;
  name: string;
  args: unknown;
}

async function main(): Promise<void> {
  const call = JSON.parse(process.argv[2] ?? '') as ChildCall;
  const result = await callTool(call.workspace, call.name, call.args);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
