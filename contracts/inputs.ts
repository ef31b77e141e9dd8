/**
 * The workflow inputs' checks: a lead run's (`LeadRunInput`), a subagent's (`SubagentInput`) and a batch's
 * (`BatchInput`), checked by the client API before anything starts and (a lead's, a subagent's) again by each
 * workflow as its first act, with the value types of
 * the config file, so a limit means the same in a YAML file and in a start request. The schemas, and the
 * types inferred from them, are in contracts/input-schemas.ts.
 *
 * Checks only: a valid input goes on exactly as it came (nothing is stripped or defaulted), so a run's
 * commands, and the replay of recorded histories, do not change. An input recorded before the run scope is
 * read into it first (contracts/run-scope.ts), by the check and by the workflow alike. Objects accept keys they do not know
 * (older and newer shapes); what the workflow writes itself (`carry`, a carried ledger) is only checked for
 * its shape. Pure: no Node APIs (the workflow bundle imports this file).
 */
import { ApplicationFailure } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';
import type { z } from 'zod';
import { ConfigError } from './config/value-types';
import { batchItemsProblems } from './batch-items';
import { buildInputSchemas } from './input-schemas';
import { issueProblems } from './problems';

// Where the client API and the worker's config ask whether a folder may hold workspaces.
export { normalizePosixPath, systemFolderProblem, workspaceRootProblem } from './workspace-folders';

/** The failure type a workflow fails with when its input is refused (non-retryable). */
export const INVALID_INPUT_FAILURE_TYPE = 'InvalidWorkflowInput';

/**
 * The input schemas, built on first use and kept: only a lead run and a subagent started by a client check
 * theirs (~3 ms and ~300 KB here, bench/load.ts). The worker shares this module between its workflows
 * (worker/worker.ts, PRELOADED_MODULES), so one build serves them all; the schemas are pure, and `built` is
 * not exported, so the sandbox does not freeze them (zod cannot use a frozen schema).
 */
let built: ReturnType<typeof buildInputSchemas> | undefined;
const inputSchemas = () => (built ??= buildInputSchemas());

/** A refused workflow input: every problem, one a line, `field: value what is wrong (what is accepted)`. */
export class InvalidInputError extends ConfigError {
  constructor(problems: string[], heading: string) {
    super(problems, heading);
    this.name = 'InvalidInputError';
  }
}

function problemsOf(schema: z.ZodType, input: unknown): string[] {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((issue) => issueProblems(issue, { whole: 'input' }));
}

/** Every problem of a lead run's input (none when it is valid). */
export function leadRunInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().leadRun, input);
}

/**
 * Every problem of a lead run's input as the run itself checks it at its start: a per-response limit above
 * the API's ceiling is taken from a run started before the ceiling (which continues as new with it).
 */
export function startedLeadRunInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().startedLeadRun, input);
}

/**
 * Every problem of a batch's input (none when it is valid): its items' (contracts/batch-items.ts, one line
 * a problem) and the rest's.
 */
export function batchInputProblems(input: unknown): string[] {
  const items =
    typeof input === 'object' && input !== null ? (input as { items?: unknown }).items : undefined;
  return [...batchItemsProblems(items), ...problemsOf(inputSchemas().batch, input)];
}

/** Every problem of a subagent's input (none when it is valid). */
export function subagentInputProblems(input: unknown): string[] {
  return problemsOf(inputSchemas().subagent, input);
}

function heading(what: string, count: number): string {
  return `${what} is refused, ${count === 1 ? '1 problem' : `${count} problems`}:`;
}

/** Throws InvalidInputError naming every problem of a lead run's input. */
export function assertLeadRunInput(input: unknown): void {
  const problems = leadRunInputProblems(input);
  if (problems.length > 0) throw new InvalidInputError(problems, heading('lead run input', problems.length));
}

function failWorkflow(what: string, found: string[]): void {
  // Checked alike at a run's start and at every replay of it, so a refused run replays as the failure it
  // recorded rather than into the loop. The check is workflow code: one that refuses what an earlier version
  // accepted would fail the replay of runs that passed it, so it comes in behind a `patched()` gate.
  if (found.length === 0) return;
  const error = new InvalidInputError(found, heading(what, found.length));
  // Non-retryable: the run fails at once with the reason, rather than retrying a task that can never pass.
  throw ApplicationFailure.create({
    message: error.message,
    type: INVALID_INPUT_FAILURE_TYPE,
    nonRetryable: true,
    details: [found],
  });
}

/** A workflow's first act: a refused input fails the run at once (ApplicationFailure, non-retryable). */
export function failOnInvalidLeadRunInput(input: unknown): void {
  failWorkflow('lead run input', startedLeadRunInputProblems(input));
}

/**
 * A workflow's first act: a refused input fails the run at once (ApplicationFailure, non-retryable). Only a
 * subagent started by a client is checked: a child's input is built by its parent's own code from the parent's
 * input, checked when the parent started, and the task's arguments, checked by the task tool.
 */
export function failOnInvalidSubagentInput(input: unknown): void {
  if (workflowInfo().parent) return;
  failWorkflow('subagent input', subagentInputProblems(input));
}
