/**
 * What a run carries of DeerFlow's `memory:` section (its scope's `memory`), and DeerMem's defaults: a leaf
 * module, so that the input schemas can check it without importing the memory contracts (contracts/memory.ts,
 * which re-exports it). Pure: no Node APIs.
 */
import { z } from 'zod';

/** DeerFlow's two ways memory is written: extraction after a run (`middleware`), or the model's own tools. */
export const MEMORY_MODES = ['middleware', 'tool'] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];

/** What a run carries of the `memory:` section (in its scope): absent, no memory. */
export interface RunMemorySettings {
  mode: MemoryMode;
  /** Tell the lead the user's facts in its system prompt. */
  injection_enabled: boolean;
  /** The cap of the `<memory>` block, in tokens (estimated from characters: no tokenizer download). */
  max_injection_tokens: number;
  /** The most facts a user keeps: past it, the least confident go. */
  max_facts: number;
  /** `middleware`: a new fact less sure than this is not kept (absent in runs from before: DeerMem's 0.7). */
  fact_confidence_threshold?: number;
  /** `middleware`: how long the extraction waits after a run ends for more (absent in runs from before: 30). */
  debounce_seconds?: number;
}

/** The run scope's `memory` (contracts/input-schemas.ts). */
export function runMemorySchema() {
  return z.strictObject({
    mode: z.enum(MEMORY_MODES),
    injection_enabled: z.boolean(),
    max_injection_tokens: z.number().int().min(1),
    max_facts: z.number().int().min(1),
    fact_confidence_threshold: z.number().min(0).max(1).optional(),
    debounce_seconds: z.number().min(0).optional(),
  });
}

/** DeerMem's defaults (DeerFlow's config.example.yaml). */
export const DEFAULT_MEMORY_SETTINGS = {
  max_injection_tokens: 2000,
  max_facts: 100,
  fact_confidence_threshold: 0.7,
  debounce_seconds: 30,
} as const;
