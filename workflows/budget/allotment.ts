/**
 * An agent's share of the tree budget, leased from the root (workflows/budget/tree-ledger.ts): before each model
 * call the agent reserves the call's input and `max_tokens` of output from what it holds, and asks the root only
 * when that does not fit. Pure: the workflow sends the requests and hands in the answers.
 */
import {
  addSpend,
  roundUsd,
  ZERO_AMOUNT,
  ZERO_SPEND,
  type AllotmentGrant,
  type AllotmentState,
  type Amount,
  type AllotmentRequest,
  type Spend,
} from '../../contracts/budget';

export function initialAllotment(): AllotmentState {
  return { seq: 0, answered: 0, spent: { ...ZERO_SPEND }, granted: { ...ZERO_AMOUNT } };
}

export class Allotment {
  constructor(
    private readonly agent: string,
    /** The axes allotments are counted in (the tree's `limits()`): an axis without a limit is not checked. */
    private readonly limits: { tokens: boolean; usd: boolean },
    public state: AllotmentState = initialAllotment(),
  ) {}

  /** What is left of the allotment after what is spent. */
  held(): Amount {
    return {
      tokens: this.state.granted.tokens - this.state.spent.total_tokens,
      cost_usd: roundUsd(this.state.granted.cost_usd - this.state.spent.cost_usd),
    };
  }

  /** Whether a call reserving `want` may start on what the agent holds, without asking. */
  covers(want: Amount): boolean {
    const held = this.held();
    return (
      (!this.limits.tokens || want.tokens <= held.tokens) &&
      (!this.limits.usd || want.cost_usd <= held.cost_usd)
    );
  }

  /** A request for `want` (a new seq), with the spend so far. */
  ask(want: Amount): AllotmentRequest {
    this.state.seq += 1;
    return { agent: this.agent, seq: this.state.seq, spent: this.state.spent, want };
  }

  /** The last request again (its answer was lost, or the root was continuing as new). */
  askAgain(want: Amount): AllotmentRequest {
    return { agent: this.agent, seq: this.state.seq, spent: this.state.spent, want };
  }

  /** The agent is done: what it holds goes back, its spend is final. */
  release(): AllotmentRequest {
    this.state.seq += 1;
    return {
      agent: this.agent,
      seq: this.state.seq,
      spent: this.state.spent,
      want: { ...ZERO_AMOUNT },
      done: true,
    };
  }

  /** Whether the root has answered the last request. */
  answeredLast(): boolean {
    return this.state.answered >= this.state.seq;
  }

  /** The root's answer or notice: a larger allotment (never a smaller one), a warning, a stop. */
  apply(grant: AllotmentGrant): void {
    if (grant.seq > this.state.answered && grant.seq <= this.state.seq) this.state.answered = grant.seq;
    if (
      grant.granted.tokens >= this.state.granted.tokens &&
      grant.granted.cost_usd >= this.state.granted.cost_usd
    ) {
      this.state.granted = { ...grant.granted };
    }
    if (grant.warning !== undefined && !this.state.warned) {
      this.state.warned = true;
      this.state.warning = grant.warning;
    }
    if (grant.stop && !this.state.stopped) this.state.stopped = grant.stop;
  }

  /** A call came back: its spend counts (once: a replayed or retried activity returns one result). */
  spend(spend: Spend): void {
    this.state.spent = addSpend(this.state.spent, spend);
  }

  /** The warning for the model's next call, once. */
  takeWarning(): string | undefined {
    const { warning } = this.state;
    this.state.warning = undefined;
    return warning;
  }
}
