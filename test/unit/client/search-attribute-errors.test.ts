import { ServiceError } from '@temporalio/client';
import { describeFailure } from '../../../cli/cli';
import { explainStartFailure, MissingSearchAttributeError } from '../../../client/search-attribute-errors';

/** The SDK's error for a start the server refused, its gRPC status as the cause (as the client surfaces it). */
function refused(details: string): ServiceError {
  const cause = Object.assign(new Error(`3 INVALID_ARGUMENT: ${details}`), {
    code: 3,
    details,
    metadata: {},
  });
  return new ServiceError('Failed to start Workflow', { cause });
}

describe('a start refused for a search attribute the server does not know', () => {
  it('says which attribute, how to register it, and ends the command with one line and exit code 1', () => {
    const err = explainStartFailure(
      refused('Namespace default has no mapping defined for search attribute UserId'),
    );
    expect(err).toBeInstanceOf(MissingSearchAttributeError);
    const { code, line } = describeFailure(err, 'run');
    expect(code).toBe(1);
    expect(line).toBe(
      "the server does not know the search attribute UserId, which this project's workflows carry: register it " +
        'once with `temporal operator search-attribute create --name UserId --type Keyword` (docs/deployment.md); ' +
        'a dev server of `subagents dev-server` adds it when it starts again',
    );
    const depth = explainStartFailure(
      refused('Namespace x has no mapping defined for search attribute DelegationDepth'),
    );
    expect((depth as Error).message).toContain('--name DelegationDepth --type Int');
  });

  it('leaves any other failure as it was', () => {
    const other = refused('Workflow task queue name is not set');
    expect(explainStartFailure(other)).toBe(other);
    const plain = new Error('boom');
    expect(explainStartFailure(plain)).toBe(plain);
  });
});
