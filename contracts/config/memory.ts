/**
 * DeerFlow's `memory:` and `circuit_breaker:` sections (issue 48), with DeerFlow's keys as written. Memory is
 * kept by this project itself (one entity workflow per user, contracts/memory.ts): `manager_class` is DeerMem's,
 * and of DeerMem's `backend_config` the keys it means here are read; the others (its file storage, its retrieval
 * index, its extraction model, …) are dropped with a warning. Absent sections: no memory, no breaker, as before
 * they were read.
 */
import { z } from 'zod';
import { DEFAULT_MEMORY_SETTINGS, MEMORY_MODES, type RunMemorySettings } from '../memory-settings';
import { bool, fraction, oneOf, section, seconds, wholeNumber } from './fields';

const backendConfig = section('memory.backend_config', {
  debounce_seconds: seconds.default(DEFAULT_MEMORY_SETTINGS.debounce_seconds),
  max_facts: wholeNumber(1, 10_000).default(DEFAULT_MEMORY_SETTINGS.max_facts),
  fact_confidence_threshold: fraction.default(DEFAULT_MEMORY_SETTINGS.fact_confidence_threshold),
  max_injection_tokens: wholeNumber(1, 1_000_000).default(DEFAULT_MEMORY_SETTINGS.max_injection_tokens),
});

/** `memory:` (DeerFlow's defaults: enabled, injected, `middleware` mode). */
export const memorySection = section('memory', {
  enabled: bool.default(true),
  injection_enabled: bool.default(true),
  mode: oneOf(MEMORY_MODES).default('middleware'),
  manager_class: oneOf(['deermem']).default('deermem'),
  backend_config: backendConfig.prefault({}),
});
export type MemoryConfig = z.output<typeof memorySection>;

/** `circuit_breaker:` (DeerFlow's keys and defaults): per provider, per worker process. */
export const circuitBreakerSection = section('circuit_breaker', {
  failure_threshold: wholeNumber(1).default(5),
  recovery_timeout_sec: seconds.default(60),
});
export type CircuitBreakerConfig = z.output<typeof circuitBreakerSection>;

/** What a lead run carries of `memory:` (its scope's `memory`): nothing unless it is enabled. */
export function resolveMemory(memory: MemoryConfig | undefined): RunMemorySettings | undefined {
  if (!memory?.enabled) return undefined;
  return {
    mode: memory.mode,
    injection_enabled: memory.injection_enabled,
    max_injection_tokens: memory.backend_config.max_injection_tokens,
    max_facts: memory.backend_config.max_facts,
    ...(memory.mode === 'middleware' && {
      fact_confidence_threshold: memory.backend_config.fact_confidence_threshold,
      debounce_seconds: memory.backend_config.debounce_seconds,
    }),
  };
}
