/**
 * A worker that serves one run (`run`, `start`) runs its workflows in the main thread and still bounds how long
 * an activation may hold it: what the SDK makes of ONE_RUN_WORKER_OPTIONS. `isolateExecutionTimeout` is not
 * among WorkerOptions' declared keys; an SDK that stopped reading it would leave such a worker without the
 * deadlock bound (debugMode's default is none), and this fails.
 */
import { DefaultLogger } from '@temporalio/worker';
import { noopMetricMeter } from '@temporalio/common/lib/metrics';
import { compileWorkerOptions } from '@temporalio/worker/lib/worker-options';
import { ONE_RUN_WORKER_OPTIONS } from '../../../worker/worker';

describe('a one-run worker', () => {
  const compile = (options: object) =>
    compileWorkerOptions(
      { taskQueue: 'one-run', workflowBundle: { code: '' }, ...options },
      new DefaultLogger('ERROR'),
      noopMetricMeter,
    );

  it('runs workflows in the main thread, an activation bounded to 5 s as in a worker thread', () => {
    const compiled = compile(ONE_RUN_WORKER_OPTIONS);
    expect(compiled.debugMode).toBe(true);
    expect(compiled.isolateExecutionTimeoutMs).toBe(5000);
    expect(compiled.isolateExecutionTimeoutMs).toBe(compile({}).isolateExecutionTimeoutMs);
  });
});
