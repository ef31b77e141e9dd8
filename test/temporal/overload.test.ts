/**
 * The system on a busy host (bench/overload.ts): 50 fan-out lead runs (three subagents each, one `bash` call
 * per subagent) started at once on two worker processes with `max_running: 40`, fewer than the 150 subagents,
 * while six CPU busy loops compete for the cores. Every run completes, no worker crashes, no bash call is
 * reported interrupted, the model is asked at most 5 % more often than the runs need; the subagents running at
 * once (from their histories) never pass `max_running`, the admission workflow's own count reaches it, and
 * every slot it granted is given back. The admission workflow's work per delegation is bounded. The figures at
 * sixteen busy loops are in BENCHMARKS.md ("Overload").
 */
import { runOverload } from '../../bench/overload';
import { testAddress, testNamespace, testWorkflowBundle, useTestClient } from '../harness/temporal';
import { useMachineTurn } from '../harness/machine-turn';
import { childrenOf, peakOverlap, workIntervals } from '../support/slot-intervals';

/** Below the 150 subagents' demand, and at least LEASE_MIN_RUNNING: the workers' leases take part. */
const MAX_RUNNING = 40;

const testClient = useTestClient();

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
        workers: 2,
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
    // The bound, from history: the most subagents that ran together never passes it; the admission workflow's
    // own count (sampled) reaches it; every slot granted was given back.
    const leads = Array.from({ length: 50 }, (_, i) => `${figures.task_queue}-${i}`);
    const children = await childrenOf(testClient(), leads);
    expect(children).toHaveLength(150);
    const intervals = await workIntervals(testClient(), children);
    expect(intervals).toHaveLength(150);
    expect(peakOverlap(intervals)).toBeLessThanOrEqual(MAX_RUNNING);
    expect(figures.peak_slots_held).toBe(MAX_RUNNING);
    // Every slot the admission workflow granted was given back. Grants a worker made from its lease and undid
    // before its next report (the subagent ended first) never reach the workflow's counts.
    expect(figures.slots_at_end.running).toBe(0);
    expect(figures.slots_at_end.released).toBe(figures.slots_at_end.granted);
    expect(figures.slots_at_end.granted).toBeGreaterThan(0);
    expect(figures.slots_at_end.granted).toBeLessThanOrEqual(150);
    // No outbound command per request: the answers went out many at a time, by activity (no local activity),
    // or none was needed (granted from a worker's lease, reported many at a time).
    expect(figures.admission.signals_sent).toBe(0);
    expect(figures.admission.markers).toBe(0);
    expect(figures.admission.deliveries + figures.admission.lease_reports).toBeGreaterThan(0);
    expect(figures.admission.deliveries).toBeLessThan(figures.admission.signals_received);
  }, 960_000);
});
