/**
 * The workflow bundle built once, by `npm run build` (worker/build-workflow-bundle.ts), and the check a worker
 * makes before it loads it: bundling at every start cost a restarted worker 7–21 s of its 10–31 s before it
 * polled (BENCHMARKS.md, "Worker start").
 *
 * Beside the bundle, a manifest holds the sha256 of every file webpack read to make it (the compiled workflows
 * and contracts, the SDK's and zod's modules, the source maps and the sources they point to) and of the bundle
 * itself. A worker uses the bundle only when every one of those files still has its digest: a bundle made from
 * other code than the checkout holds now is never run. Hashing them all (about 560 files, 4 MB) takes tens of
 * milliseconds, against seconds for the bundle.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** The project root, from dist/worker/ where this file runs. */
const ROOT = join(__dirname, '..', '..');

/**
 * Names that worker/prune-dist keeps (neither `.js` nor `.json`: it would take them for compiled files whose
 * source is gone).
 */
export const BUILT_BUNDLE_NAME = 'dist/workflow-bundle.cjs';
export const BUILT_BUNDLE_PATH = join(ROOT, BUILT_BUNDLE_NAME);
export const BUILT_BUNDLE_MANIFEST_PATH = join(ROOT, 'dist', 'workflow-bundle.manifest');

/**
 * Raised when the way the bundle is made changes while its sources may not (2: without the sources' text in its
 * source map, without zod's locales): a bundle an older build left behind is then bundled again.
 */
const MANIFEST_VERSION = 2;

export interface WorkflowBundleManifest {
  version: number;
  /** The bundle's own digest: a bundle cut short or edited by hand is not the one the manifest describes. */
  bundle_sha256: string;
  /** Every file the bundle was made from, by its path from the project root, with its sha256. */
  sources: Record<string, string>;
}

/** A bundle and the files webpack read to make it (absolute paths). */
export interface BundleWithSources {
  code: string;
  sources: readonly string[];
}

/** What a worker gets: the built bundle's code, or why it may not use it. */
export type BuiltWorkflowBundle = { ok: true; code: string; path: string } | { ok: false; reason: string };

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The digest of a file, or undefined when it cannot be read (gone, or a folder). */
function fileDigest(path: string): string | undefined {
  try {
    return sha256(readFileSync(path));
  } catch {
    return undefined;
  }
}

/** The manifest of `bundle`: its sources that are files on disk (webpack's entry point lives in memory). */
export function bundleManifest(bundle: BundleWithSources, root = ROOT): WorkflowBundleManifest {
  const sources: Record<string, string> = {};
  for (const path of [...bundle.sources].sort()) {
    const digest = fileDigest(path);
    if (digest !== undefined) sources[relative(root, path)] = digest;
  }
  return { version: MANIFEST_VERSION, bundle_sha256: sha256(bundle.code), sources };
}

/** Writes the bundle, then its manifest; each whole or not at all (a worker may be reading them). */
export function writeBuiltWorkflowBundle(
  bundle: BundleWithSources,
  paths = { bundle: BUILT_BUNDLE_PATH, manifest: BUILT_BUNDLE_MANIFEST_PATH },
  root = ROOT,
): WorkflowBundleManifest {
  const manifest = bundleManifest(bundle, root);
  const writeWhole = (path: string, data: string) => {
    writeFileSync(`${path}.tmp`, data);
    renameSync(`${path}.tmp`, path);
  };
  writeWhole(paths.bundle, bundle.code);
  writeWhole(paths.manifest, `${JSON.stringify(manifest)}\n`);
  return manifest;
}

/** The sources whose digest differs from the manifest's (changed or gone), by their path from the root. */
export function changedSources(manifest: WorkflowBundleManifest, root = ROOT): string[] {
  return Object.entries(manifest.sources)
    .filter(([path, digest]) => fileDigest(resolve(root, path)) !== digest)
    .map(([path]) => path);
}

function readManifest(path: string): WorkflowBundleManifest | undefined {
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as WorkflowBundleManifest;
    return manifest.version === MANIFEST_VERSION && typeof manifest.sources === 'object'
      ? manifest
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bundle `npm run build` made, when it was made from the code on disk now; otherwise why not, in words
 * that end a line such as `not using the built workflow bundle: …`.
 */
export function builtWorkflowBundle(
  paths = { bundle: BUILT_BUNDLE_PATH, manifest: BUILT_BUNDLE_MANIFEST_PATH },
  root = ROOT,
): BuiltWorkflowBundle {
  const shown = relative(root, paths.bundle);
  const manifest = readManifest(paths.manifest);
  if (manifest === undefined) return { ok: false, reason: `${shown} or its manifest is missing` };
  let code: string;
  try {
    code = readFileSync(paths.bundle, 'utf8');
  } catch {
    return { ok: false, reason: `${shown} is missing` };
  }
  if (sha256(code) !== manifest.bundle_sha256) {
    return { ok: false, reason: `${shown} is not the bundle its manifest describes` };
  }
  const changed = changedSources(manifest, root);
  if (changed.length > 0) {
    const more = changed.length > 1 ? ` and ${changed.length - 1} more` : '';
    return { ok: false, reason: `${changed[0]}${more} changed since ${shown} was built` };
  }
  return { ok: true, code, path: paths.bundle };
}
