import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { stringify } from 'yaml';
import type { ChatMessage, ToolSpec } from '../../../../contracts/messages';
import type { ModelCallInput, ModelCallResult, ModelSettings } from '../../../../contracts/model';
import type { ModelScriptFileInput } from '../../../../activities/model/model-script';
import { testActivities } from '../../../support/activities';

const { callModel } = testActivities();

/**
 * An activity context like the worker's, at the given attempt, with the heartbeat timeout the workflows
 * declare (3 s, workflows/agent-loop.ts); quiet, so expected failures do not log.
 */
export function activityEnv(attempt = 1): MockActivityEnvironment {
  return new MockActivityEnvironment(
    { attempt, heartbeatTimeoutMs: 3000 },
    { logger: new DefaultLogger('ERROR') },
  );
}

/** `callModel` run inside `env`'s activity context. */
export function callModelIn(env: MockActivityEnvironment, input: ModelCallInput): Promise<ModelCallResult> {
  return env.run<[ModelCallInput], ModelCallResult, typeof callModel>(callModel, input);
}

export function modelInput(
  model: Partial<ModelSettings> & Pick<ModelSettings, 'provider'>,
  messages: ChatMessage[],
  options: { agent?: string; tools?: ToolSpec[] } = {},
): ModelCallInput {
  return {
    model: { name: 'test-model', model: 'm1', ...model },
    agent_name: options.agent ?? 'lead',
    messages,
    tools: options.tools ?? [],
  };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'model-test-'));
}

export function writeScript(
  dir: string,
  script: ModelScriptFileInput | string,
  name = 'script.yaml',
): string {
  const file = join(dir, name);
  writeFileSync(file, typeof script === 'string' ? script : stringify(script));
  return file;
}

/** The retryable failure `promise` rejects with; fails the test when it resolves or throws anything else. */
export async function retryableFailureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    (value) => {
      throw new Error(`expected a retryable failure, got ${JSON.stringify(value)}`);
    },
    (reason: unknown) => reason,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  const failure = err as ApplicationFailure;
  // The type workflows' retry policies and readers rely on: pinned as a literal.
  expect(failure.type).toBe('ModelProviderRetryable');
  expect(failure.nonRetryable).toBe(false);
  return failure;
}
