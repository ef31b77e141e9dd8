import { capOutput, OutputCollector } from '../../../../activities/tools/output';

describe('tool output within its cap', () => {
  const text = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'🚀'.repeat(i % 3)}`).join('\n');

  it('keeps the head and the tail, marker included within the cap', () => {
    const capped = capOutput(text, 500);
    expect(capped.length).toBeLessThanOrEqual(500);
    expect(capped.startsWith('line 0 \nline 1 🚀')).toBe(true);
    expect(capped.endsWith(text.slice(-50))).toBe(true);
    expect(capped).toMatch(/\[… [\d,]+ characters omitted …\]/);
    expect(capOutput('short', 500)).toBe('short');
  });

  it('gives a stream, however it is chunked, the same text as the whole', () => {
    for (const size of [1, 7, 64, 4096]) {
      const collector = new OutputCollector(500);
      for (let i = 0; i < text.length; i += size) collector.push(text.slice(i, i + size));
      expect(collector.text()).toBe(capOutput(text, 500));
    }
    const small = new OutputCollector(500);
    small.push('a\n');
    small.push('b\n');
    expect(small.text()).toBe('a\nb\n');
  });
});
