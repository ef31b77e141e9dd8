/**
 * What some tests need from the machine, each behind a flag that CI sets (`.ci/run`): where one is missing, its
 * tests are skipped and say so on stderr; with its flag at 1 the test file fails instead, naming what is missing,
 * so that a CI machine without it cannot pass by skipping (as SUBAGENTS_REQUIRE_POSTGRES and
 * SUBAGENTS_REQUIRE_BROWSER do for theirs).
 */
export const REQUIREMENTS = {
  /** bubblewrap: the bash tool's sandbox, and the escape attempts run in it. */
  sandbox: 'SUBAGENTS_REQUIRE_SANDBOX',
  /** moto's S3-compatible server, for the S3 payload store. */
  s3: 'SUBAGENTS_REQUIRE_S3',
  /** `unshare` (util-linux) with user and mount namespaces, and the kernel features the limits tests probe. */
  namespaces: 'SUBAGENTS_REQUIRE_NAMESPACES',
  /** python3, which some tests run as a helper. */
  python: 'SUBAGENTS_REQUIRE_PYTHON',
  /** A cgroup of its own for each bash call, with the pids and memory controllers (v1, or v2 delegated). */
  cgroups: 'SUBAGENTS_REQUIRE_CGROUPS',
} as const;

export type Requirement = keyof typeof REQUIREMENTS;

/**
 * Whether `what` can run here: true when nothing is `missing`; false, said on stderr, when it is missing and not
 * required; throws (failing the test file) when it is missing and its flag requires it.
 */
export function available(requirement: Requirement, what: string, missing: string | undefined): boolean {
  if (missing === undefined) return true;
  const flag = REQUIREMENTS[requirement];
  if (process.env[flag] === '1') throw new Error(`${flag}=1, but ${what} cannot run here: ${missing}`);
  process.stderr.write(`${what} SKIPPED: ${missing} (${flag}=1 makes this a failure)\n`);
  return false;
}

/** `it` where `what` can run, else `it.skip` (or a failure, when required): see `available`. */
export function itWhere(requirement: Requirement, what: string, missing: string | undefined): jest.It {
  return available(requirement, what, missing) ? it : it.skip;
}
