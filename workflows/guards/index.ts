import type { LoopDetectionSettings, TokenBudgetSettings } from '../../contracts/subagent';
import type { Guard } from './guard';
import { loopGuard } from './loop-guard';
import { tokenBudgetGuard } from './token-budget-guard';
import { turnGuard } from './turn-guard';

export * from './guard';
export { loopGuard, canonicalJson, toolCallSetSignature } from './loop-guard';
export { tokenBudgetGuard } from './token-budget-guard';
export { turnGuard } from './turn-guard';

export interface GuardSettings {
  maxTurns: number;
  tokenBudget: TokenBudgetSettings;
  loopDetection: LoopDetectionSettings;
}

/** Every guard an agent loop runs, each with its settings, in the order their stops take precedence. */
export function defaultGuards(settings: GuardSettings): Guard[] {
  return [
    tokenBudgetGuard(settings.tokenBudget),
    loopGuard(settings.loopDetection),
    turnGuard(settings.maxTurns),
  ];
}
