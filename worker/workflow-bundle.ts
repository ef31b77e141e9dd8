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
import type * as Terser from 'terser' with { 'resolution-mode': 'import' };

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
 * source map, without zod's locales; 3: printed in ASCII): a bundle an older build left behind is then bundled
 * again.
 */
const MANIFEST_VERSION = 3;

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

const INLINE_MAP = '//# sourceMappingURL=data:application/json;base64,';

/** A source map as JSON holds it: what a bundle's inline map decodes to. */
export interface BundleSourceMap {
  version: number;
  file?: string;
  sources: string[];
  names: string[];
  mappings: string;
  [field: string]: unknown;
}

/** Where a bundle's inline source map starts (the comment) and where its base64 does. */
function inlineMap(code: string): { at: number; base64: number } {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const base64 = at < 0 ? -1 : code.indexOf('base64,', at);
  if (base64 < 0) throw new Error('the workflow bundle has no inline source map');
  return { at, base64: base64 + 'base64,'.length };
}

/** A bundle's code and its inline source map (webpack's `inline-…-source-map`, as the SDK requires one). */
export function splitSourceMap(code: string): { code: string; map: BundleSourceMap } {
  const { at, base64 } = inlineMap(code);
  const json = Buffer.from(code.slice(base64).trimEnd(), 'base64').toString();
  return { code: code.slice(0, at), map: JSON.parse(json) as BundleSourceMap };
}

function joinSourceMap(code: string, map: BundleSourceMap): string {
  return `${code.replace(/\n?$/, '\n')}${INLINE_MAP}${Buffer.from(JSON.stringify(map)).toString('base64')}`;
}

/**
 * The bundle printed again in ASCII alone (each other character of a string, a regular expression or a template
 * as its escape; comments dropped), its source map carried through: one bundle character that is not ASCII (our
 * own `—` and `…`, 223 of them) makes V8 hold the whole 2.3 MB source, and each of its copies, two bytes a
 * character. Names are kept and nothing is compressed: the code is the same code, without its layout.
 */
export async function asciiBundle(bundle: BundleWithSources): Promise<BundleWithSources> {
  // Loaded here alone: a worker that loads the built bundle never needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
  const { minify } = require('terser') as typeof Terser;
  const { code, map } = splitSourceMap(bundle.code);
  const file = map.file ?? 'workflow-bundle.cjs';
  const printed = await minify(
    { [file]: code },
    {
      compress: false,
      mangle: false,
      format: { ascii_only: true, comments: false },
      sourceMap: { content: JSON.stringify(map), asObject: true },
    },
  );
  if (printed.code === undefined || typeof printed.map !== 'object') {
    throw new Error('printing the workflow bundle in ASCII gave no code or no source map');
  }
  // `file` first: `withoutSourceMappings` reads it from the map's first bytes.
  const { version, ...printedMap } = printed.map as unknown as BundleSourceMap;
  return { ...bundle, code: joinSourceMap(printed.code, { version, file, ...printedMap }) };
}

/**
 * The bundle with a source map that maps nothing (the SDK refuses a bundle without one): the SDK parses a
 * bundle's map once a process, into WebAssembly memory it keeps (~15 MiB), and looks up every frame of every
 * stack trace workflow code makes (one at each promise it creates). Stack traces then name the functions and
 * their places in the bundle instead of the TypeScript sources' lines.
 */
export function withoutSourceMappings(code: string): string {
  const { at, base64 } = inlineMap(code);
  // Its first bytes when it starts with `file` (as asciiBundle writes it): parsing the whole map, a few MB that
  // are thrown away at once, left this process's heap ~14 MiB larger for the whole run.
  const head = Buffer.from(code.slice(base64, base64 + 1024), 'base64').toString();
  const file = /^\{"version":3,"file":("(?:[^"\\]|\\.)*")/.exec(head)?.[1];
  const map =
    file === undefined ? splitSourceMap(code).map : { version: 3, file: JSON.parse(file) as string };
  return joinSourceMap(code.slice(0, at), {
    version: map.version,
    ...(map.file !== undefined && { file: map.file }),
    sources: [],
    names: [],
    mappings: '',
  });
}

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
