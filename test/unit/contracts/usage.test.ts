/** Token usage adds up across a run; the prompt cache's counts only where a provider reported them. */
import { addUsage, ZERO_USAGE, type TokenUsage } from '../../../contracts/messages';

const usage = (input: number, output: number, cache: Partial<TokenUsage> = {}): TokenUsage => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output,
  ...cache,
});

it('adds the three counts, and leaves the cache counts out when no side reported them', () => {
  expect(addUsage(usage(10, 2), usage(5, 1))).toEqual(usage(15, 3));
  expect(addUsage(ZERO_USAGE, usage(5, 1))).toEqual(usage(5, 1));
  expect(addUsage(usage(5, 1), undefined)).toEqual(usage(5, 1));
});

it('adds the cache counts where either side reported them, a side without them counting none', () => {
  expect(addUsage(usage(100, 5, { cache_read_tokens: 60, cache_write_tokens: 30 }), usage(10, 1))).toEqual(
    usage(110, 6, { cache_read_tokens: 60, cache_write_tokens: 30 }),
  );
  expect(
    addUsage(
      usage(100, 5, { cache_read_tokens: 60 }),
      usage(200, 5, { cache_read_tokens: 90, cache_write_tokens: 0 }),
    ),
  ).toEqual(usage(300, 10, { cache_read_tokens: 150, cache_write_tokens: 0 }));
});
