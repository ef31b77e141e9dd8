import { ServiceError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { deliverAnswers } from '../../../activities/admission';
import type { AdmissionDelivery } from '../../../contracts/admission';

/** A gRPC error as the client surfaces it: a ServiceError whose cause carries the status code. */
function grpcError(code: number): ServiceError {
  const cause = Object.assign(new Error(`grpc ${code}`), { code, details: `grpc ${code}`, metadata: {} });
  return new ServiceError(`signal failed (${code})`, { cause });
}

/** A client whose signals fail for some owners, and records the others. */
function client(failures: Record<string, Error>) {
  const signalled: string[] = [];
  const fake = {
    workflow: {
      getHandle: (owner: string) => ({
        signal: async () => {
          const failure = failures[owner];
          if (failure) throw failure;
          signalled.push(owner);
        },
      }),
    },
  } as unknown as Client;
  return { fake, signalled };
}

const delivery = (owner: string): AdmissionDelivery => ({
  owner,
  answer: { slot: `slot-${owner}`, outcome: 'granted' },
});

describe('deliverAnswers', () => {
  it('signals every owner and names the slots of owners that closed or can never take the signal', async () => {
    const { fake, signalled } = client({
      closed: new WorkflowNotFoundError('gone', 'closed', undefined),
      refusing: grpcError(9),
    });
    const owners = ['a', 'closed', 'b', 'refusing', ...Array.from({ length: 20 }, (_, i) => `n${i}`)];
    const gone = await deliverAnswers(fake, owners.map(delivery));
    expect(gone.sort()).toEqual(['slot-closed', 'slot-refusing']);
    expect(signalled).toHaveLength(owners.length - 2);
  });

  it('throws on a failure that says nothing of the owner (the server unreachable), so the delivery is retried', async () => {
    const { fake } = client({ b: grpcError(14) });
    await expect(deliverAnswers(fake, ['a', 'b'].map(delivery))).rejects.toThrow('signal failed (14)');
  });
});

describe('deliverAnswers resumed', () => {
  it('starts where an earlier attempt said it was, keeping the closed owners it found, and says how far it got', async () => {
    const { fake, signalled } = client({ late: new WorkflowNotFoundError('gone', 'late', undefined) });
    const owners = [...Array.from({ length: 16 }, (_, i) => `early${i}`), 'x', 'late', 'y'];
    const beats: { done: number; gone: string[] }[] = [];
    const gone = await deliverAnswers(
      fake,
      owners.map(delivery),
      { done: 16, gone: ['slot-early3'] },
      (progress) => beats.push(progress),
    );
    expect(signalled).toEqual(['x', 'y']);
    expect(gone.sort()).toEqual(['slot-early3', 'slot-late']);
    expect(beats).toEqual([{ done: 19, gone: ['slot-early3', 'slot-late'] }]);
  });
});
