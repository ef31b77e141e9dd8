/**
 * One bash command in just-bash, as a process of its own (started by just-bash.ts):
 *
 *   node just-bash-runner.js WORKSPACE OPTIONS_JSON COMMAND
 *
 * A process rather than a call inside the worker, so that the worker's limits and kill apply to it like to any
 * other sandbox: its environment holds none of the worker's variables, its process group is killed on timeout
 * or cancellation, its heap and CPU time are capped, and a command that spins cannot stall the worker's
 * heartbeats. It prints the command's stdout, then its stderr, and exits with the command's exit code.
 */
import { Bash, getCommandNames, latin1FromBytes, stdoutAsBytes, type CommandName } from 'just-bash';
import type { SkillMount } from '../../contracts/tools';
import { justBashFileSystem } from './just-bash-fs';
import { SANDBOX_ENV } from './sandbox';

export interface JustBashRunnerOptions {
  /** Largest file a command may write (or read: just-bash reads files whole). */
  max_file_bytes: number;
  /** just-bash's own deadline; the worker kills the process at the tool's timeout before it is reached. */
  deadline_ms: number;
  /** Skill folders (host paths resolved), mounted read-only at their container paths. */
  mounts: SkillMount[];
  /** The request-scoped secrets, by name: the command gets these variables of the runner's environment. */
  secret_names: string[];
}

/** Exit status when the runner itself could not run the command (as a shell says for "cannot execute"). */
export const RUNNER_FAILED_EXIT_CODE = 126;

/** sqlite3's worker thread cannot load from just-bash's CommonJS bundle: better "not found" than a crash. */
const COMMANDS = getCommandNames().filter((name): name is CommandName => name !== 'sqlite3');

const NOT_FOUND = /: command not (found|available)/;

/** Said once under a command that named a program just-bash does not have. */
export const NOT_FOUND_HINT =
  '[just-bash: this bash is simulated and has only its built-in commands (grep, sed, awk, find, jq, …); ' +
  'programs installed on the machine (python, node, git, compilers) cannot run here]\n';

function write(stream: NodeJS.WriteStream, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => (data.length === 0 ? resolve() : stream.write(data, () => resolve())));
}

/** The secrets' values, from this process's environment (bash.ts put them there). */
function secretsOf(names: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) values[name] = value;
  }
  return values;
}

async function main(argv: string[]): Promise<number> {
  const [workspace, optionsJson, command] = argv;
  if (workspace === undefined || optionsJson === undefined || command === undefined) {
    await write(process.stderr, 'usage: just-bash-runner WORKSPACE OPTIONS_JSON COMMAND\n');
    return RUNNER_FAILED_EXIT_CODE;
  }
  const options = JSON.parse(optionsJson) as JustBashRunnerOptions;
  const bash = new Bash({
    fs: justBashFileSystem(workspace, options.max_file_bytes, options.mounts),
    cwd: workspace,
    env: { ...SANDBOX_ENV, ...secretsOf(options.secret_names) },
    commands: COMMANDS,
    executionLimits: { maxExecutionTimeMs: options.deadline_ms },
  });
  let stdout: Buffer;
  let stderr: string;
  let exitCode: number;
  try {
    const result = await bash.exec(command);
    stdout = Buffer.from(latin1FromBytes(stdoutAsBytes(result)), 'latin1');
    stderr = result.stderr;
    exitCode = result.exitCode;
  } catch (err) {
    // just-bash throws, instead of failing the one command, when the file system refuses a redirection
    // (outside the workspace, read-only, too large): what the command printed before is lost with it.
    stdout = Buffer.alloc(0);
    stderr = `bash: ${err instanceof Error ? err.message : String(err)}\n`;
    exitCode = 1;
  }
  await write(process.stdout, stdout);
  await write(process.stderr, NOT_FOUND.test(stderr) ? stderr + NOT_FOUND_HINT : stderr);
  return exitCode & 0xff;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`just-bash could not run the command: ${String(err)}\n`, () =>
        process.exit(RUNNER_FAILED_EXIT_CODE),
      );
    },
  );
}
