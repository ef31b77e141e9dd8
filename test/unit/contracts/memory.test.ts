import { memoryBlock, parseMemoryToolCall, searchFacts, type MemoryFact } from '../../../contracts/memory';
import { parseConfig } from '../../../contracts/config';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';

const fact = (id: string, content: string, confidence: number, category = 'context'): MemoryFact => ({
  id,
  content,
  category,
  confidence,
  source_run: 'r1',
  created_at: `2026-12-0${id.slice(-1)}T00:00:00.000Z`,
  updated_at: `2026-12-0${id.slice(-1)}T00:00:00.000Z`,
});

describe("the lead's <memory> block (DeerFlow's injection)", () => {
  it('lists the facts most confident first, as DeerFlow writes a fact line', () => {
    const block = memoryBlock(
      [fact('f1', 'Uses uv', 0.7, 'correction'), fact('f2', 'Likes tea', 0.95)],
      2000,
    );
    expect(block).toBe(
      '<memory>\nFacts:\n- [context | 0.95] Likes tea\n- [correction | 0.70] Uses uv\n</memory>',
    );
  });

  it('keeps within max_injection_tokens, dropping the least confident', () => {
    const facts = [fact('f1', 'a'.repeat(40), 0.9), fact('f2', 'b'.repeat(40), 0.8)];
    const block = memoryBlock(facts, 20);
    expect(block).toContain('a'.repeat(40));
    expect(block).not.toContain('b'.repeat(40));
    expect(memoryBlock(facts, 2)).toBe('');
  });

  it('is empty without facts, and a fact cannot close the block', () => {
    expect(memoryBlock([], 2000)).toBe('');
    expect(memoryBlock([fact('f1', '</memory> & more', 0.9)], 2000)).toContain('&lt;/memory&gt; &amp; more');
  });
});

describe("the memory tools' arguments (DeerFlow's)", () => {
  it('reads memory_add with its defaults: category context, confidence 0.7', () => {
    expect(parseMemoryToolCall('memory_add', '{"content": " Likes tea "}')).toEqual({
      ok: true,
      call: { kind: 'add', content: 'Likes tea', category: 'context', confidence: 0.7 },
    });
    expect(parseMemoryToolCall('memory_add', '{"content": "x", "confidence": 3}')).toMatchObject({
      call: { confidence: 1 },
    });
  });

  it('tells the model what is wrong', () => {
    expect(parseMemoryToolCall('memory_add', '{"content": ""}')).toEqual({
      ok: false,
      error: 'empty content',
    });
    expect(parseMemoryToolCall('memory_delete', '{}')).toEqual({ ok: false, error: 'fact_id is required' });
    expect(parseMemoryToolCall('memory_update', '{"fact_id": "f1", "confidence": "high"}')).toEqual({
      ok: false,
      error: 'confidence must be a number',
    });
  });

  it('searches by substring, case-insensitive, within a category', () => {
    const facts = [fact('f1', 'Likes Tea', 0.6), fact('f2', 'tea at noon', 0.9, 'behavior')];
    expect(searchFacts(facts, { query: 'TEA', limit: 10 }).map((f) => f.id)).toEqual(['f2', 'f1']);
    expect(searchFacts(facts, { query: 'tea', category: 'context', limit: 10 }).map((f) => f.id)).toEqual([
      'f1',
    ]);
    expect(searchFacts(facts, { query: 'tea', limit: 1 })).toHaveLength(1);
  });
});

describe('the memory: section', () => {
  const input = (raw: Record<string, unknown>) =>
    buildLeadRunInput(parseConfig(raw).config, { prompt: 'p', workspace: '/tmp/w' });

  it('puts the memory in the run scope when enabled, with DeerMem keys from backend_config', () => {
    expect(input({}).scope.memory).toBeUndefined();
    expect(input({ memory: { enabled: false } }).scope.memory).toBeUndefined();
    expect(
      input({ memory: { mode: 'tool', backend_config: { max_facts: 5, max_injection_tokens: 300 } } }).scope
        .memory,
    ).toEqual({ mode: 'tool', injection_enabled: true, max_injection_tokens: 300, max_facts: 5 });
    // DeerFlow's default mode carries the extraction's keys.
    expect(
      input({ memory: { backend_config: { fact_confidence_threshold: 0.8, debounce_seconds: 5 } } }).scope
        .memory,
    ).toEqual({
      mode: 'middleware',
      injection_enabled: true,
      max_injection_tokens: 2000,
      max_facts: 100,
      fact_confidence_threshold: 0.8,
      debounce_seconds: 5,
    });
  });

  it("drops DeerMem's keys it does not use with a warning; middleware mode is not warned about", () => {
    const { warnings } = parseConfig({
      memory: { manager_class: 'deermem', backend_config: { storage_path: '', max_facts: 10 } },
    });
    expect(warnings).toContain(
      'ignoring DeerFlow keys this project does not read (yet): memory.backend_config.storage_path',
    );
    expect(warnings.some((w) => w.startsWith('memory.'))).toBe(false);
  });

  it('reads circuit_breaker with DeerFlow defaults', () => {
    expect(parseConfig({}).config.circuit_breaker).toBeUndefined();
    expect(parseConfig({ circuit_breaker: {} }).config.circuit_breaker).toEqual({
      failure_threshold: 5,
      recovery_timeout_sec: 60,
    });
  });
});
