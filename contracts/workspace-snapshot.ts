/**
 * The manifest of a saved workspace, as it is stored (a JSON blob in the payload store, its key the sha256 of
 * its bytes): every path of the folder and what stands there, either in full or as the changes since the
 * manifest before it. A host that restores a workspace reads manifests another host wrote, so every path is
 * checked here before any code joins it to a folder. Pure: no Node APIs.
 */
import { z } from 'zod';

/** The manifest format this code writes and reads. */
export const WORKSPACE_MANIFEST_VERSION = 1;

const BLOB_KEY = /^[0-9a-f]{64}$/;

/** Permission bits only (`0o7777 & st_mode`): the file type is the entry's kind. */
const modeSchema = z.number().int().min(0).max(0o7777);

export const workspaceFileSchema = z
  .object({
    kind: z.literal('file'),
    /** The sha256 of the file's content: its blob key. */
    blob: z.string().regex(BLOB_KEY, 'a blob key: 64 lowercase hex digits'),
    size: z.number().int().nonnegative(),
    mode: modeSchema,
  })
  .strict();

export const workspaceDirSchema = z.object({ kind: z.literal('dir'), mode: modeSchema }).strict();

/** A symbolic link, kept as the text of its target: never followed, neither when saved nor when restored. */
export const workspaceSymlinkSchema = z
  .object({
    kind: z.literal('symlink'),
    target: z
      .string()
      .min(1)
      .refine((target) => !target.includes('\0'), 'a link target without NUL'),
  })
  .strict();

export const manifestEntrySchema = z.discriminatedUnion('kind', [
  workspaceFileSchema,
  workspaceDirSchema,
  workspaceSymlinkSchema,
]);

export type ManifestEntry = z.infer<typeof manifestEntrySchema>;

/**
 * Why `path` cannot name something inside a workspace, or undefined when it can: a POSIX path relative to the
 * workspace's root, without `.`, `..` or empty segments (so no leading `./`, no leading or trailing slash).
 */
export function workspacePathProblem(path: string): string | undefined {
  if (path === '') return 'it is empty';
  if (path.startsWith('/')) return 'it is absolute';
  if (path.includes('\0')) return 'it holds a NUL character';
  for (const segment of path.split('/')) {
    if (segment === '..') return 'it climbs out with ".."';
    if (segment === '.' || segment === '') return 'it holds a "." or an empty segment';
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A record of workspace paths, each path checked and each value parsed by `entry`. Not `z.record`: it builds
 * its result by assignment, so a file named `__proto__` (a name a workspace may hold) would vanish from it;
 * `Object.fromEntries` defines every path as an own key.
 */
function pathRecord<T extends z.ZodType>(entry: T) {
  return z
    .custom<Record<string, unknown>>(isPlainObject, 'an object whose keys are workspace paths')
    .transform((record, ctx) => {
      const entries: [string, z.output<T>][] = [];
      for (const [path, value] of Object.entries(record)) {
        const problem = workspacePathProblem(path);
        if (problem !== undefined) {
          ctx.addIssue({ code: 'custom', path: [path], message: `not a workspace path (${problem})` });
          continue;
        }
        const parsed = entry.safeParse(value);
        if (parsed.success) entries.push([path, parsed.data]);
        else
          for (const issue of parsed.error.issues)
            ctx.addIssue({ code: 'custom', path: [path, ...issue.path], message: issue.message });
      }
      return Object.fromEntries(entries);
    });
}

export const workspaceManifestSchema = z
  .object({
    v: z.literal(WORKSPACE_MANIFEST_VERSION),
    /** 1 for a workspace's first manifest, one more for each one saved after it. */
    seq: z.number().int().positive(),
    /** The blob key of the manifest this one follows; required for a delta. */
    base: z.string().regex(BLOB_KEY, 'a blob key: 64 lowercase hex digits').optional(),
    /** How many deltas lie between this manifest and the last full one: 0 for a full one. */
    depth: z.number().int().nonnegative(),
    /** How many files, and how many bytes in them, the whole workspace holds as of this manifest. */
    files: z.number().int().nonnegative(),
    bytes: z.number().int().nonnegative(),
    /** Every entry of the workspace. */
    full: pathRecord(manifestEntrySchema).optional(),
    /** Only what changed since `base`: a new or changed entry, or null for a path that is gone. */
    changes: pathRecord(manifestEntrySchema.nullable()).optional(),
  })
  .strict()
  .superRefine((manifest, ctx) => {
    if ((manifest.full === undefined) === (manifest.changes === undefined))
      ctx.addIssue({ code: 'custom', message: 'a manifest holds exactly one of full and changes' });
    if (manifest.full !== undefined) {
      if (manifest.depth !== 0)
        ctx.addIssue({ code: 'custom', path: ['depth'], message: 'a full manifest has depth 0' });
    }
    if (manifest.changes !== undefined) {
      if (manifest.base === undefined)
        ctx.addIssue({ code: 'custom', path: ['base'], message: 'a delta names the manifest it follows' });
      if (manifest.depth === 0)
        ctx.addIssue({ code: 'custom', path: ['depth'], message: 'a delta has depth 1 or more' });
    }
  });

export type WorkspaceManifest = z.infer<typeof workspaceManifestSchema>;

/**
 * A manifest read from its JSON text, checked; `where` names it for the error (`workspace manifest <key>`).
 * Throws, naming the manifest and the first problems, when it is not one this code can trust.
 */
export function readWorkspaceManifest(text: string, where: string): WorkspaceManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = workspaceManifestSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.map(String).join('.') || '(manifest)'}: ${issue.message}`);
    throw new Error(`${where} is not a valid workspace manifest: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/**
 * The JSON text of a manifest, its entries in path order, so that the same workspace always gives the same
 * bytes and so the same blob key.
 */
export function writeWorkspaceManifest(manifest: WorkspaceManifest): string {
  const sorted = <T>(record: Record<string, T> | undefined): Record<string, T> | undefined =>
    record === undefined
      ? undefined
      : Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({ ...manifest, full: sorted(manifest.full), changes: sorted(manifest.changes) });
}
