/**
 * The recorded histories' manifest (test/fixtures/histories/SHA256SUMS, the form `sha256sum -c` reads): each
 * file's SHA-256 as the recorder wrote it. Only `npm run record:histories` updates it, for the files it wrote, so
 * a recording changed by anything else (a hand edit, a recorder that rewrites what it was not asked to) fails
 * `test/temporal/replay.test.ts`.
 */
import type { AdmissionPool } from '../../contracts/admission';

export const MANIFEST_FILE = 'SHA256SUMS';

/**
 * The admission workflows' recordings that the recorder writes again, by name (`RECORD_ONLY` may name them),
 * and the pool each records: the subagents' pool as every delegation left it, and the runs' pool, which leases
 * its slots to the worker (its lease reports are Updates). `admission-workflow.json` (answers as one signal
 * command each) and `admission-workflow-batched.json` (answers batched) are older recordings, kept as they are.
 */
export const ADMISSION_RECORDINGS: Readonly<Record<string, AdmissionPool>> = {
  'admission-workflow-activity': 'subagents',
  'admission-workflow-lease': 'runs',
};

/** File → SHA-256 (hex), from the manifest's text. */
export function manifestEntries(text: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const line of text.split('\n').filter(Boolean)) {
    const match = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (!match)
      throw new Error(`${MANIFEST_FILE}: a line is not "<sha256>  <file>": ${JSON.stringify(line)}`);
    entries[match[2]] = match[1];
  }
  return entries;
}

/** The manifest's text: one line a file, sorted by name. */
export function manifestText(entries: Record<string, string>): string {
  return Object.keys(entries)
    .sort()
    .map((file) => `${entries[file]}  ${file}\n`)
    .join('');
}
