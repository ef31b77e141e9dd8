/**
 * The tree budget's ledger, kept by the root of the tree (the lead run): what the root spent itself, what every
 * other agent reported spending, what each holds of the remainder (its allotment), and whether the tree has been
 * warned or stopped. Allotments are leased the way admission leases slots (workflows/admission/leases.ts): an
 * agent spends from what it holds without asking, and asks again only when its next call does not fit, so two
 * parallel children never spend the same remainder. Pure: the workflow sends the answers it returns.
 */
import {
  addSpend,
  readBudget,
  roundUsd,
  stopReasonOf,
  treeBudgetWarning,
  ZERO_SPEND,
  ZERO_AMOUNT,
  type AllotmentGrant,
  type AllotmentRequest,
  type Amount,
  type Holder,
  type TreeBudgetCarry,
  type TreeBudgetReport,
  type TreeLedgerState,
  type Spend,
  type TreeBudgetSettings,
  type TreeStopReason,
} from '../../contracts/budget';

/** An answer the workflow sends: to the agent that asked, or to every holder (a warning, a stop). */
export interface Notice {
  agent: string;
  grant: AllotmentGrant;
}

/** Of what is left after a want, the share an allotment takes beyond it: a few calls without a round trip. */
const SLACK_SHARE = 8;

/** The report of a run whose lead keeps `carry`'s ledger (absent: the run has no tree budget). */
export function treeBudgetReport(carry: TreeBudgetCarry | undefined): { tree_budget?: TreeBudgetReport } {
  const state = carry?.ledger;
  if (!state) return {};
  const spent = Object.values(state.holders).reduce((sum, holder) => addSpend(sum, holder.spent), state.own);
  return { tree_budget: { spent, ...(state.stopped && { stopped: state.stopped }) } };
}

export function initialTreeLedger(): TreeLedgerState {
  return { own: { ...ZERO_SPEND }, holders: {} };
}

export class TreeLedger {
  constructor(
    private readonly settings: TreeBudgetSettings,
    public state: TreeLedgerState = initialTreeLedger(),
  ) {}

  /** What the whole tree has spent: the root's own calls and every agent's last report. */
  spent(): Spend {
    return treeBudgetReport({ ledger: this.state }).tree_budget?.spent ?? this.state.own;
  }

  /**
   * What the tree may still hand out: the hard stop's limit less what is spent and what holders keep unspent.
   * An axis without a limit reads 0 (nothing to hand out, nothing to check).
   */
  available(): Amount {
    const spent = this.spent();
    let tokens = this.limitTokens() - spent.total_tokens;
    let usd = this.limitUsd() - spent.cost_usd;
    for (const holder of Object.values(this.state.holders)) {
      if (holder.done) continue;
      tokens -= Math.max(0, holder.granted.tokens - holder.spent.total_tokens);
      usd -= Math.max(0, holder.granted.cost_usd - holder.spent.cost_usd);
    }
    return {
      tokens: this.limited('tokens') ? Math.max(0, tokens) : 0,
      cost_usd: this.limited('usd') ? Math.max(0, roundUsd(usd)) : 0,
    };
  }

  /**
   * The root's own next call, reserving `want`: undefined when it may go, else why the tree stops it (the tree
   * was stopped, or what is left cannot cover the call).
   */
  reserveOwn(want: Amount): TreeStopReason | undefined {
    if (this.state.stopped) return this.state.stopped;
    return this.shortfall(want, this.available());
  }

  /** The root's own call came back: its spend is the tree's; returns the notices it causes. */
  spendOwn(spend: Spend): Notice[] {
    this.state.own = addSpend(this.state.own, spend);
    return this.checkThresholds();
  }

  /** The root's own warning, once (the agents get theirs by notice). */
  takeOwnWarning(): string | undefined {
    if (!this.state.warned || this.state.own_warned) return undefined;
    this.state.own_warned = true;
    return this.warning();
  }

  /**
   * An agent's request: its report is recorded (a stale or repeated one changes nothing but is answered again,
   * so a lost answer is made good), then it is granted what it wants and a share of the rest, if the tree can.
   */
  lease(request: AllotmentRequest): Notice[] {
    let holder = this.state.holders[request.agent];
    if (!holder) {
      holder = { seq: 0, spent: { ...ZERO_SPEND }, granted: { ...ZERO_AMOUNT } };
      this.state.holders[request.agent] = holder;
    }
    if (request.seq <= holder.seq)
      return holder.done ? [] : [this.answer(request.agent, holder, request.seq)];
    holder.seq = request.seq;
    if (holder.spent.total_tokens <= request.spent.total_tokens) holder.spent = request.spent;
    if (request.done) {
      holder.done = true;
      holder.granted = { tokens: holder.spent.total_tokens, cost_usd: holder.spent.cost_usd };
      return this.checkThresholds();
    }
    const notices = this.checkThresholds();
    if (!this.state.stopped) {
      const held: Amount = {
        tokens: Math.max(0, holder.granted.tokens - holder.spent.total_tokens),
        cost_usd: Math.max(0, holder.granted.cost_usd - holder.spent.cost_usd),
      };
      const need: Amount = {
        tokens: this.limited('tokens') ? Math.max(0, request.want.tokens - held.tokens) : 0,
        cost_usd: this.limited('usd') ? Math.max(0, roundUsd(request.want.cost_usd - held.cost_usd)) : 0,
      };
      const free = this.available();
      if (this.shortfall(need, free) === undefined) {
        holder.granted = {
          tokens: holder.granted.tokens + need.tokens + Math.floor((free.tokens - need.tokens) / SLACK_SHARE),
          cost_usd: roundUsd(
            holder.granted.cost_usd + need.cost_usd + (free.cost_usd - need.cost_usd) / SLACK_SHARE,
          ),
        };
      }
    }
    // The asker hears back on its own request (its seq: what it waits for), with what a notice just broadcast
    // told it (the warning is told once), and the allotment as granted now.
    const told = notices.find((notice) => notice.agent === request.agent)?.grant;
    const answer = this.answer(request.agent, holder, request.seq);
    if (told?.warning !== undefined) answer.grant.warning = told.warning;
    return [...notices.filter((notice) => notice.agent !== request.agent), answer];
  }

  /** The answer to `agent`: its allotment, the warning if it has not had it, the stop if the tree stopped. */
  private answer(agent: string, holder: Holder, seq: number): Notice {
    const grant: AllotmentGrant = { seq, granted: { ...holder.granted } };
    if (this.state.warned && !holder.warned) {
      holder.warned = true;
      const warning = this.warning();
      if (warning !== undefined) grant.warning = warning;
    }
    if (this.state.stopped) grant.stop = this.state.stopped;
    return { agent, grant };
  }

  /** Crossing a threshold tells every agent still running: the warning once, the stop once. */
  private checkThresholds(): Notice[] {
    const reading = readBudget(this.settings, this.spent());
    if (!reading) return [];
    let changed = false;
    if (!this.state.stopped && reading.fraction >= this.settings.hard_stop_threshold) {
      this.state.stopped = stopReasonOf(reading.axis);
      changed = true;
    }
    if (!this.state.warned && reading.fraction >= this.settings.warn_threshold) {
      this.state.warned = true;
      changed = true;
    }
    if (!changed) return [];
    return Object.entries(this.state.holders)
      .filter(([, holder]) => !holder.done)
      .map(([agent, holder]) => this.answer(agent, holder, 0));
  }

  private warning(): string | undefined {
    const reading = readBudget(this.settings, this.spent());
    return reading && treeBudgetWarning(reading);
  }

  /** Why `free` cannot cover `want`, if it cannot: the axis that falls short. */
  private shortfall(want: Amount, free: Amount): TreeStopReason | undefined {
    if (this.limited('tokens') && want.tokens > free.tokens) return 'token_capped';
    if (this.limited('usd') && want.cost_usd > free.cost_usd) return 'cost_capped';
    return undefined;
  }

  /** Which axes allotments are counted in: the agents check only those. */
  limits(): { tokens: boolean; usd: boolean } {
    return { tokens: this.limited('tokens'), usd: this.limited('usd') };
  }

  private limited(axis: 'tokens' | 'usd'): boolean {
    return axis === 'usd' ? this.settings.max_cost_usd !== undefined : this.limitTokens() !== Infinity;
  }

  /**
   * The hard stop in total tokens, what allotments are counted in. An input or output limit alone is read on
   * what was spent (the stop at its threshold), not reserved against.
   */
  private limitTokens(): number {
    const { max_tokens, hard_stop_threshold } = this.settings;
    return max_tokens === undefined ? Infinity : Math.floor(max_tokens * hard_stop_threshold);
  }

  private limitUsd(): number {
    const { max_cost_usd, hard_stop_threshold } = this.settings;
    return max_cost_usd === undefined ? Infinity : max_cost_usd * hard_stop_threshold;
  }
}
