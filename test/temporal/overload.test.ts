/**
 * The system on a busy host (bench/overload.ts): 50 fan-out lead runs (three subagents each, one `bash` call
 * per subagent) started at once on one worker process with `max_running: 200`, while six CPU busy loops compete
 * for the cores. Every run completes, the worker never crashes, no bash call is reported interrupted, the model
 * is asked at most 5 % more often than the runs need, and never more than `max_running` subagents hold a slot.
 * The admission workflow's work per delegation is bounded. The figures at sixteen busy loops are in
 * BENCHMARKS.md ("Overload").
 */
import { runOverload } from '../../bench/overload';
import { testAddress, testNamespace, testWorkflowBundle } from '../harness/temporal';
import { useMachineTurn } from '../harness/machine-turn';

const MAX_RUNNING = 200;

// Its busy loops load every test running beside it; the chaos test, with a deadline, waits for its turn.
useMachineTurn();

describe('on a busy host', () => {
  it('completes 50 fan-out runs beside six busy loops: no crash, no false interruption, no repeated model call', async () => {
    const figures = await runOverload(
      { address: testAddress(), namespace: testNamespace() },
      testWorkflowBundle(),
      {
        provider: 'scripted',
        modelMs: 0,
        runs: 50,
        busy: 6,
        maxRunning: MAX_RUNNING,
        deadlineS: 900,
        label: 'test',
        json: false,
      },
    );
    expect(figures).toMatchObject({
      completed_runs: 50,
      failed_runs: 0,
      unfinished_runs: 0,
      worker_crashes: 0,
      bash_calls: 150,
      bash_interrupted: 0,
    });
    expect(figures.model_calls).toBeGreaterThanOrEqual(figures.model_calls_needed);
    expect(figures.model_calls).toBeLessThanOrEqual(Math.floor(figures.model_calls_needed * 1.05));
    expect(figures.peak_slots_held).toBeLessThanOrEqual(MAX_RUNNING);
    // No outbound command per request: the answers went out many at a time, by activity (no local activity),
    // or none was needed (granted from a worker's lease, reported many at a time).
    expect(figures.admission.signals_sent).toBe(0);
    expect(figures.admission.markers).toBe(0);
    expect(figures.admission.deliveries + figures.admission.lease_reports).toBeGreaterThan(0);
    expect(figures.admission.deliveries).toBeLessThan(figures.admission.signals_received);
  }, 960_000);
});
