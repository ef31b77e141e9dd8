/**
 * The worker's side of a lead run started with its prompt alone: the full input from the worker's loaded
 * config, the same `buildLeadRunInput` our own client uses, its workspace `workspace.root/<run id>`.
 */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { Config } from '../contracts/config';
import { buildLeadRunInput } from '../contracts/config/lead-input';
import { systemFolderProblem } from '../contracts/workspace-folders';
import type { LeadInputFiller } from '../contracts/minimal-lead-input';
import { existingSkillsRoot } from './config';

export function configLeadInputs(config: Config): LeadInputFiller {
  return ({ prompt, run_id }) => {
    const workspace = resolve(join(config.workspace.root, run_id));
    const problem = systemFolderProblem(workspace, homedir());
    if (problem !== undefined) {
      throw ApplicationFailure.nonRetryable(
        `workspace.root/${run_id}: ${JSON.stringify(workspace)} ${problem}`,
      );
    }
    mkdirSync(workspace, { recursive: true });
    return buildLeadRunInput(config, { prompt, run_id, workspace, skills_root: existingSkillsRoot(config) });
  };
}
