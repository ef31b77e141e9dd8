/**
 * Whether a batch item's subagent did its work: its acceptance criteria (contracts/batch-items.ts) checked
 * against its final answer and its workspace. File criteria go through the file tools' confinement
 * (tools/workspace.ts): `..` and absolute paths are refused, and a symbolic link is followed only while it
 * stays inside the workspace, even one swapped in while the check runs.
 */
import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  answerVerdict,
  isAnswerCriterion,
  MAX_ACCEPTANCE_READ_BYTES,
  parseCriterion,
  type AcceptanceCheck,
  type AcceptanceInput,
  type AcceptanceVerdict,
  type Criterion,
} from '../contracts/batch-items';
import { groupThousands } from '../contracts/text';
import { DEFAULT_SANDBOX } from '../contracts/tools';
import { whileHeartbeating } from './activity-context';
import { errorCode, fileError } from './tools/file-errors';
import { ToolError, type ToolContext } from './tools/tool-context';
import { openInWorkspace, resolveInWorkspace } from './tools/workspace';
import { oneProcessWorkspaces, withWorkspaceOutcome, type WorkspaceHost } from './workspace/host';

/** As the file tools open for reading: no link followed by the kernel, no wait on a FIFO. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

type FileCriterion = Extract<Criterion, { form: 'file_exists' | 'file_contains' }>;

/** The workspace as the file tools see it; undefined when it does not exist (then no file can be in it). */
export async function workspaceContext(
  workspace: string,
  signal: AbortSignal,
): Promise<ToolContext | undefined> {
  if (!path.isAbsolute(workspace)) {
    // The batch workflow's own mistake: a retry would make the same one.
    throw ApplicationFailure.nonRetryable(`workspace: "${workspace}" is not an absolute path`);
  }
  const resolved = path.resolve(workspace);
  try {
    return {
      workspace: resolved,
      workspaceReal: await realpath(resolved),
      sandbox: DEFAULT_SANDBOX,
      signal,
    };
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** Reads at most `max` bytes from the start of an open file. */
export async function readHead(handle: FileHandle, max: number): Promise<Buffer> {
  const buffer = Buffer.alloc(max);
  let filled = 0;
  while (filled < max) {
    const { bytesRead } = await handle.read(buffer, filled, max - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** A file criterion decided in the workspace; the workspace's own refusals become the check's detail. */
async function fileCheck(ctx: ToolContext, criterion: FileCriterion): Promise<AcceptanceCheck> {
  const passed: AcceptanceCheck = { criterion: criterion.written, passed: true };
  const failed = (detail: string): AcceptanceCheck => ({
    criterion: criterion.written,
    passed: false,
    detail,
  });
  const request = { tool: criterion.form, requested: criterion.path };
  const name = JSON.stringify(criterion.path);
  let handle: FileHandle | undefined;
  try {
    const target = resolveInWorkspace(ctx, criterion.form, criterion.path);
    handle = await openInWorkspace(target, (at) => open(at, READ_FLAGS));
    const stats = await handle.stat();
    if (stats.isDirectory()) return failed(`${name} is a directory, not a file`);
    if (!stats.isFile()) return failed(`${name} is not a regular file (a FIFO, socket or device)`);
    if (criterion.form === 'file_exists') return passed;

    // A bounded read: a huge file is searched in its first part only, and the detail says so.
    const head = await readHead(handle, Math.min(stats.size, MAX_ACCEPTANCE_READ_BYTES));
    if (head.includes(Buffer.from(criterion.text, 'utf8'))) return passed;
    const missing = `${name} does not contain ${JSON.stringify(criterion.text)}`;
    if (stats.size <= head.length) return failed(missing);
    return failed(
      `${missing} in its first ${groupThousands(head.length)} bytes (the file is ${groupThousands(stats.size)} ` +
        `bytes; file_contains reads at most ${groupThousands(MAX_ACCEPTANCE_READ_BYTES)})`,
    );
  } catch (err) {
    const refusal = err instanceof ToolError ? err : fileError(err, request, 'reading');
    if (refusal instanceof ToolError) return failed(refusal.message);
    throw refusal;
  } finally {
    await handle?.close();
  }
}

async function checkAcceptance(input: AcceptanceInput): Promise<AcceptanceVerdict> {
  const parsed = input.criteria.map(parseCriterion);
  return whileHeartbeating(async (signal) => {
    const files = parsed.some((criterion) => !('problem' in criterion) && !isAnswerCriterion(criterion));
    const ctx = files ? await workspaceContext(input.workspace, signal) : undefined;
    const checks: AcceptanceCheck[] = [];
    for (const [index, criterion] of parsed.entries()) {
      if ('problem' in criterion) {
        checks.push({ criterion: input.criteria[index], passed: false, detail: criterion.problem });
      } else if (isAnswerCriterion(criterion)) {
        checks.push(...answerVerdict([criterion], input.answer).checks);
      } else if (ctx === undefined) {
        checks.push({
          criterion: criterion.written,
          passed: false,
          detail: `the workspace ${input.workspace} does not exist`,
        });
      } else {
        checks.push(await fileCheck(ctx, criterion));
      }
    }
    return { passed: checks.every((check) => check.passed), checks };
  });
}

/** The acceptance activities of a worker, its file criteria checked where the run's workspace is. */
export function createAcceptanceActivities(workspaces: WorkspaceHost = oneProcessWorkspaces()) {
  return {
    /**
     * Every criterion of a batch item checked, in order. A criterion that does not parse fails with its
     * problem as the detail; infrastructure faults throw (retried), a relative workspace fails at once.
     */
    checkAcceptance: async (input: AcceptanceInput): Promise<AcceptanceVerdict> => {
      const { placement } = input;
      if (placement === undefined) return checkAcceptance(input);
      return withWorkspaceOutcome(
        await workspaces.serve(placement, input.workspace, false, () => checkAcceptance(input)),
      );
    },
  };
}

export type AcceptanceActivities = ReturnType<typeof createAcceptanceActivities>;
