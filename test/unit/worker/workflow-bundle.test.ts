/**
 * The workflow bundle `npm run build` makes is run only while it matches the code it was made from: a changed
 * source, a bundle that is not the manifest's, or no manifest, and a worker bundles the workflows itself.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtOrBundledWorkflows } from '../../../worker/worker';
import { builtWorkflowBundle, writeBuiltWorkflowBundle } from '../../../worker/workflow-bundle';

describe('the built workflow bundle', () => {
  let root: string;
  let paths: { bundle: string; manifest: string };
  let sources: string[];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'built-bundle-'));
    mkdirSync(join(root, 'dist', 'workflows'), { recursive: true });
    sources = [join(root, 'dist', 'workflows', 'index.js'), join(root, 'dist', 'workflows', 'loop.js')];
    sources.forEach((path, i) => writeFileSync(path, `exports.step = ${i};\n`));
    paths = { bundle: join(root, 'dist', 'bundle.cjs'), manifest: join(root, 'dist', 'bundle.manifest') };
    writeBuiltWorkflowBundle(
      // The entry point webpack makes in memory is no file: it is left out, not taken for a changed one.
      { code: 'the bundle', sources: [...sources, join(root, 'dist', 'workflows-entrypoint.cjs')] },
      paths,
      root,
    );
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const built = () => builtWorkflowBundle(paths, root);

  /** What a worker would load, the lines it said, and whether it bundled. */
  async function workerLoads() {
    const said: string[] = [];
    let bundled = 0;
    const code = await builtOrBundledWorkflows(
      (line) => said.push(line),
      built,
      async () => {
        bundled += 1;
        return 'bundled now';
      },
    );
    return { code, said, bundled };
  }

  it('is used while every file it was made from is unchanged', async () => {
    expect(built()).toEqual({ ok: true, code: 'the bundle', path: paths.bundle });
    expect(await workerLoads()).toEqual({ code: 'the bundle', said: [], bundled: 0 });
  });

  it('is not used once a source changed since the build, and the worker says which', async () => {
    writeFileSync(sources[1], 'exports.step = 2;\n');
    expect(await workerLoads()).toEqual({
      code: 'bundled now',
      said: [
        'not using the built workflow bundle: dist/workflows/loop.js changed since dist/bundle.cjs was built; ' +
          'bundling the workflows now (npm run build makes it once)',
      ],
      bundled: 1,
    });
  });

  it('is not used once a source is gone', () => {
    rmSync(sources[0]);
    rmSync(sources[1]);
    expect(built()).toEqual({
      ok: false,
      reason: 'dist/workflows/index.js and 1 more changed since dist/bundle.cjs was built',
    });
  });

  it('is not used when the bundle is not the one its manifest describes', () => {
    writeFileSync(paths.bundle, 'another bundle');
    expect(built()).toEqual({
      ok: false,
      reason: 'dist/bundle.cjs is not the bundle its manifest describes',
    });
  });

  it('is not used without its manifest', async () => {
    rmSync(paths.manifest);
    const loaded = await workerLoads();
    expect(loaded.code).toBe('bundled now');
    expect(loaded.said).toEqual([
      'not using the built workflow bundle: dist/bundle.cjs or its manifest is missing; ' +
        'bundling the workflows now (npm run build makes it once)',
    ]);
  });
});
