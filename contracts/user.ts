/**
 * Whose run it is: a run carries a user id (`subagents run --user`, `lead.user_id`, the client API's
 * `user_id`), every delegation of the run carries its lead's, and the Web UI filters by it (the `UserId` search
 * attribute). Per-user things (a user's own skills) are found by it, so it is also a folder name: it cannot
 * climb out of its folder. Pure: no Node APIs.
 */

/** A run started without one. */
export const DEFAULT_USER_ID = 'default';

/** Letters, digits, `.`, `_`, `-` and `@`, starting with a letter or digit: a safe folder name. */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

/** What a user id may be, as an error message ends it. */
export const USER_ID_RULE =
  'letters, digits, ".", "_", "-" and "@", starting with a letter or digit, at most 128 characters';

/** What a value that is not a user id is told, after the value. */
export const NOT_A_USER_ID = `is not a user id (${USER_ID_RULE})`;

/** Why `id` is not a user id (`is not …`, to follow the value), or undefined when it is one. */
export function userIdProblem(id: string): string | undefined {
  return USER_ID_PATTERN.test(id) ? undefined : NOT_A_USER_ID;
}
