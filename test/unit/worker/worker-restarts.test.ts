import type { Worker } from '@temporalio/worker';
import { runUntilWithRestarts } from '../../../worker/worker';

/** A stand-in for a Worker: `runUntil` fails while `failures` last, else waits for the body. */
function workers(failures: number) {
  let made = 0;
  const create = async (): Promise<Worker> => {
    made += 1;
    const fails = made <= failures;
    return {
      runUntil: async <T>(body: Promise<T>) => {
        if (fails) throw new Error(`worker ${made} failed`);
        return body;
      },
    } as unknown as Worker;
  };
  return { create, made: () => made };
}

describe('runUntilWithRestarts', () => {
  it('replaces a worker that fails while the body goes on, and returns the body’s result', async () => {
    const { create, made } = workers(2);
    const said: string[] = [];
    let started = 0;
    // The body ends once both failures have been told: it outlives them whatever the host's speed.
    let bothFailed: () => void = () => undefined;
    const failuresTold = new Promise<void>((resolve) => (bothFailed = resolve));
    const result = await runUntilWithRestarts(
      create,
      async () => {
        started += 1;
        await failuresTold;
        return 'done';
      },
      (line) => {
        said.push(line);
        if (said.length === 2) bothFailed();
      },
    );
    expect(result).toBe('done');
    expect(started).toBe(1);
    expect(made()).toBe(3);
    expect(said).toEqual([
      'worker failed (worker 1 failed); starting a new one (1 of 5)',
      'worker failed (worker 2 failed); starting a new one (2 of 5)',
    ]);
  });

  it('gives up after the restarts allowed, with the last worker’s error', async () => {
    const { create, made } = workers(10);
    const never = () => new Promise<string>(() => undefined);
    await expect(runUntilWithRestarts(create, never, () => undefined, 2)).rejects.toThrow('worker 3 failed');
    expect(made()).toBe(3);
  });
});
