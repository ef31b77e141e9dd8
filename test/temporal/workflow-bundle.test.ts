/**
 * The workflow bundle every worker loads is lean (worker/worker.ts, LEAN_BUNDLE): its inline source map holds
 * the mappings to our TypeScript sources but not their text, and zod's locales other than English are left
 * out; a running workflow's stack trace, as the Web UI's stack-trace tab asks for it, still names our sources.
 */
import { readFileSync } from 'node:fs';
import { admissionWorkflowId } from '../../contracts/admission';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

/** The bundle's code and its inline source map (the one the SDK reads). */
function suiteBundle(): { code: string; sourceMap: Record<string, unknown> } {
  const path = process.env.TEMPORAL_TEST_WORKFLOW_BUNDLE;
  if (!path) throw new Error('TEMPORAL_TEST_WORKFLOW_BUNDLE is set by the suite setup');
  const code = readFileSync(path, 'utf8');
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const base64 = code.slice(code.indexOf('base64,', at) + 'base64,'.length).trimEnd();
  return {
    code: code.slice(0, at),
    sourceMap: JSON.parse(Buffer.from(base64, 'base64').toString()) as Record<string, unknown>,
  };
}

describe('the workflow bundle', () => {
  it('maps to our TypeScript sources without carrying their text, and holds no zod locale but English', () => {
    const { code, sourceMap } = suiteBundle();
    const sources = sourceMap.sources as string[];
    expect(sources.some((source) => source.endsWith('workflows/agent-loop.ts'))).toBe(true);
    expect((sourceMap.mappings as string).length).toBeGreaterThan(0);
    expect(sourceMap.sourcesContent).toBeUndefined();
    const locales = new Set(code.match(/zod\/v4\/locales\/[\w-]+\.cjs/g));
    expect([...locales]).toEqual(['zod/v4/locales/en.cjs']);
  });

  it("names a waiting workflow's TypeScript source in its stack trace", async () => {
    const taskQueue = uniqueTaskQueue('bundle-stack');
    const stack = await withProjectWorker(taskQueue, async () => {
      // The admission workflow starts with the worker and waits for signals from then on.
      const handle = testClient().workflow.getHandle(admissionWorkflowId(taskQueue));
      let trace = '';
      await waitFor('the admission workflow to wait', async () => {
        trace = await handle.query<string>('__stack_trace').catch(() => '');
        return trace.length > 0;
      });
      return trace;
    });
    expect(stack).toMatch(/workflows\/admission\.ts:\d+:\d+/);
  });
});
