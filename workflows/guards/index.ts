import type { Guard } from './guard';
import { loopGuard } from './loop-guard';
import { tokenBudgetGuard } from './token-budget-guard';
import { turnGuard } from './turn-guard';

export * from './guard';
export { loopGuard, canonicalJson, toolCallSetSignature } from './loop-guard';
export { tokenBudgetGuard } from './token-budget-guard';
export { turnGuard } from './turn-guard';

/** Every guard an agent loop runs, in the order their stops take precedence. */
export const DEFAULT_GUARDS: readonly Guard[] = [tokenBudgetGuard, loopGuard, turnGuard];
