import { PassThrough } from 'node:stream';
import { ServiceError } from '@temporalio/client';
import type { RunHandle } from '../../../client/api';
import { watchRun } from '../../../cli/progress';
import type { LeadRunResult, LeadStatus } from '../../../contracts/lead';

const RESULT: LeadRunResult = {
  run_id: 'run-1',
  status: 'cancelled',
  final_output: '',
  ledger: [],
  token_usage: {},
  turns: 1,
};

function status(state: LeadStatus['state']): LeadStatus {
  return {
    state,
    turns: 1,
    token_usage: {},
    counts: {
      queued: 0,
      in_progress: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      timed_out: 0,
      polling_timed_out: 0,
    },
    last_seq: 0,
  };
}

/**
 * A run whose first `failures` status queries fail as a busy worker's can, then answer that it finished; its
 * result is there from the start, or (`going`) only once a query has said it finished.
 */
function flakyRun(failures: number, error: () => Error, going = false): RunHandle {
  let asked = 0;
  let answered: (result: LeadRunResult) => void = () => undefined;
  const result = going
    ? new Promise<LeadRunResult>((resolve) => (answered = resolve))
    : Promise.resolve(RESULT);
  const handle = {
    runId: 'run-1',
    result: () => result,
    status: async () => {
      asked += 1;
      if (asked <= failures) throw error();
      answered(RESULT);
      return status('finished');
    },
    ledger: async () => [],
    events: async () => [],
  };
  // Only what watchRun uses.
  return handle as unknown as RunHandle;
}

describe('watchRun', () => {
  const options = () => ({ out: new PassThrough(), live: false, color: false, pollMs: 1 });

  it('asks again when a query fails for a moment, and returns the run’s result', async () => {
    const run = flakyRun(3, () => new ServiceError('Failed to query Workflow'), true);
    await expect(watchRun(run, options())).resolves.toEqual(RESULT);
  });

  it('returns the result of a run that has ended though its queries fail', async () => {
    const run = flakyRun(1000, () => new ServiceError('Failed to query Workflow'));
    await expect(watchRun(run, options())).resolves.toEqual(RESULT);
  });

  it('prints the finished tree without a terminal even when the ended run no longer answers queries', async () => {
    // A `--once` run whose worker stopped as the run ended: the tree comes from the result.
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
    const run = flakyRun(1000, () => new ServiceError('Failed to query Workflow'));
    await watchRun(run, { ...options(), out });
    expect(printed).toMatch(/^lead {2}cancelled · 1 turn/m);
  });

  it('gives up after a long run of failed queries, and at once on anything else', async () => {
    await expect(
      watchRun(
        flakyRun(1000, () => new ServiceError('down'), true),
        options(),
      ),
    ).rejects.toThrow('down');
    await expect(
      watchRun(
        flakyRun(1, () => new Error('bug'), true),
        options(),
      ),
    ).rejects.toThrow('bug');
  });

  it('keeps the live tree’s elapsed times going while no worker answers the queries', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      // The first poll is answered; then the worker is gone and every query waits, as the server makes it wait.
      let asked = 0;
      const waiting: ((err: Error) => void)[] = [];
      const unanswered = <T>() => new Promise<T>((_resolve, reject) => waiting.push(reject));
      let answered: (result: LeadRunResult) => void = () => undefined;
      const result = new Promise<LeadRunResult>((resolve) => (answered = resolve));
      const run = {
        runId: 'run-1',
        result: () => result,
        status: () => (++asked === 1 ? Promise.resolve(status('running')) : unanswered<LeadStatus>()),
        ledger: () => (asked <= 1 ? Promise.resolve([]) : unanswered<[]>()),
        events: () => (asked <= 1 ? Promise.resolve([]) : unanswered<[]>()),
      } as unknown as RunHandle;
      const out = new PassThrough();
      let printed = '';
      out.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      const lastLeadLine = () => [...printed.matchAll(/^lead {2}running[^\n]*$/gm)].at(-1)?.[0];

      const watching = watchRun(run, { out, live: true, color: false, pollMs: 300 });
      await jest.advanceTimersByTimeAsync(0);
      expect(lastLeadLine()).toMatch(/ 0ms$/);
      await jest.advanceTimersByTimeAsync(65_000);
      expect(asked).toBe(2);
      expect(lastLeadLine()).toMatch(/ 1m05s$/);

      // The worker is back: the waiting queries fail, the run's result is in.
      answered(RESULT);
      for (const reject of waiting) reject(new ServiceError('Failed to query Workflow'));
      await jest.advanceTimersByTimeAsync(0);
      await expect(watching).resolves.toEqual(RESULT);
    } finally {
      jest.useRealTimers();
    }
  });
});
