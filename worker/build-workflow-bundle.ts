/**
 * `npm run build`'s last step (scripts/build.mjs runs it once dist/ is compiled): the workflow bundle every
 * worker loads, dist/workflow-bundle.cjs with its manifest (worker/workflow-bundle.ts). Skipped when the bundle
 * there was made from the code on disk now: a change outside the workflows' code costs no bundling. The bundle is
 * printed in ASCII (`asciiBundle`: half the memory of each copy of its source a worker holds).
 */
import { bundleProjectWorkflowsWithSources } from './worker';
import {
  asciiBundle,
  BUILT_BUNDLE_NAME,
  builtWorkflowBundle,
  writeBuiltWorkflowBundle,
} from './workflow-bundle';

async function main(): Promise<void> {
  const built = builtWorkflowBundle();
  if (built.ok) return;
  // Past two seconds the bundler's own progress follows, then how long it took.
  process.stderr.write(`Bundling the workflows into ${BUILT_BUNDLE_NAME} (${built.reason})\n`);
  writeBuiltWorkflowBundle(await asciiBundle(await bundleProjectWorkflowsWithSources()));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `Bundling the workflows failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exitCode = 1;
});
