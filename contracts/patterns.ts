/**
 * Regular expressions that a user or a model wrote — a batch item's `matches:` criterion, a `tool_search`
 * query — run on RE2's linear-time engine (re2js, a pure JavaScript port: no native build, no Node APIs), never
 * on JavaScript's backtracking RegExp: `(a+)+b` over 32 characters pinned a worker for minutes there, here it
 * takes microseconds. Every such pattern goes through `compileUserPattern`.
 *
 * RE2 syntax is Perl's without the features that need backtracking: no backreferences (`\1`), no lookaround
 * (`(?=`, `(?!`, `(?<=`, `(?<!`), and none of JavaScript's own spellings such as `[^]` (write `[\s\S]`) or
 * `\u00e9` (write `\x{00e9}`). A pattern that uses them is refused with RE2's message and a line saying so.
 */
import type { RE2JS as Engine } from 're2js' with { 'resolution-mode': 'import' };

// re2js 1.x ships its types as an ES module only; its CommonJS build is what this CommonJS code loads.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { RE2JS } = require('re2js') as { RE2JS: typeof Engine };

/** A compiled pattern: whether it matches somewhere in a text, and how many times (non-overlapping). */
export interface UserPattern {
  test(text: string): boolean;
  count(text: string): number;
}

export interface UserPatternOptions {
  ignoreCase?: boolean;
}

/** What RE2 does not take, said after its own message. */
const RE2_LIMITS =
  'patterns run on a linear-time engine (RE2 syntax): no backreferences, no lookaround, [\\s\\S] for any character';

/** A user's or a model's pattern compiled for linear-time matching, or why it cannot be. */
export function compileUserPattern(
  pattern: string,
  options: UserPatternOptions = {},
): UserPattern | { problem: string } {
  let compiled: Engine;
  try {
    compiled = RE2JS.compile(pattern, options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { problem: `${message} (${RE2_LIMITS})` };
  }
  return {
    test: (text) => compiled.matcher(text).find(),
    count: (text) => {
      const matcher = compiled.matcher(text);
      let found = 0;
      while (matcher.find()) found += 1;
      return found;
    },
  };
}

/** A pattern that matches `text` literally; it always compiles. */
export function literalUserPattern(text: string, options: UserPatternOptions = {}): UserPattern {
  const compiled = compileUserPattern(RE2JS.quote(text), options);
  if ('problem' in compiled) throw new Error(`a quoted pattern did not compile: ${compiled.problem}`);
  return compiled;
}
