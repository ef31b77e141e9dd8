import {
  ZERO_SPEND,
  type AllotmentGrant,
  type Spend,
  type TreeBudgetSettings,
} from '../../../contracts/budget';
import { Allotment } from '../../../workflows/budget/allotment';
import { TreeLedger, type Notice } from '../../../workflows/budget/tree-ledger';

const TOKENS: TreeBudgetSettings = { max_tokens: 4000, warn_threshold: 0.8, hard_stop_threshold: 1 };

const spent = (total: number, cost_usd = 0): Spend => ({
  input_tokens: total - Math.floor(total / 4),
  output_tokens: Math.floor(total / 4),
  total_tokens: total,
  cost_usd,
});

/** The answer addressed to `agent` among `notices`. */
function answerTo(notices: Notice[], agent: string): AllotmentGrant {
  const found = notices.find((notice) => notice.agent === agent);
  if (!found) throw new Error(`no answer to ${agent} in ${JSON.stringify(notices)}`);
  return found.grant;
}

describe('TreeLedger: allotments leased from the root', () => {
  it('never lets two parallel agents hold the same remainder', () => {
    const ledger = new TreeLedger(TOKENS);
    const grants = ['a', 'b', 'c'].map((agent) =>
      answerTo(
        ledger.lease({ agent, seq: 1, spent: ZERO_SPEND, want: { tokens: 1000, cost_usd: 0 } }),
        agent,
      ),
    );
    const held = grants.reduce((sum, grant) => sum + grant.granted.tokens, 0);
    for (const grant of grants) expect(grant.granted.tokens).toBeGreaterThanOrEqual(1000);
    expect(held).toBeLessThanOrEqual(4000);
    expect(ledger.available().tokens).toBe(4000 - held);
  });

  it('refuses a want the remainder cannot cover, and the agent that asked stops with token_capped', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 3000, cost_usd: 0 } });
    const allotment = new Allotment('b', { tokens: true, usd: false });
    const request = allotment.ask({ tokens: 3000, cost_usd: 0 });
    allotment.apply(answerTo(ledger.lease(request), 'b'));
    expect(allotment.answeredLast()).toBe(true);
    expect(allotment.covers({ tokens: 3000, cost_usd: 0 })).toBe(false);
  });

  it('gives back what a finished agent held unspent', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 2000, cost_usd: 0 } });
    ledger.lease({ agent: 'a', seq: 2, spent: spent(500), want: { tokens: 0, cost_usd: 0 }, done: true });
    expect(ledger.spent().total_tokens).toBe(500);
    expect(ledger.available().tokens).toBe(3500);
  });

  it('counts a report that arrives twice or late once (reports are cumulative)', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 1000, cost_usd: 0 } });
    ledger.lease({ agent: 'a', seq: 2, spent: spent(900), want: { tokens: 1000, cost_usd: 0 } });
    const again = ledger.lease({
      agent: 'a',
      seq: 2,
      spent: spent(900),
      want: { tokens: 1000, cost_usd: 0 },
    });
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 1000, cost_usd: 0 } });
    expect(ledger.spent().total_tokens).toBe(900);
    // The repeated request is answered again (its first answer may have been lost), with the same allotment.
    expect(answerTo(again, 'a').seq).toBe(2);
  });

  it('tells every agent still running at warn_threshold, in DeerFlow words, once', () => {
    const ledger = new TreeLedger(TOKENS);
    for (const agent of ['a', 'b']) {
      ledger.lease({ agent, seq: 1, spent: ZERO_SPEND, want: { tokens: 500, cost_usd: 0 } });
    }
    const notices = ledger.spendOwn(spent(3300));
    expect(notices.map((notice) => notice.agent).sort()).toEqual(['a', 'b']);
    expect(notices[0].grant.warning).toMatch(
      /^\[TOKEN BUDGET WARNING\] You have used 3,300 of your 4,000 total token budget \(83%\)\. Wrap up your current work/,
    );
    expect(notices[0].grant.stop).toBeUndefined();
    expect(ledger.takeOwnWarning()).toMatch(/^\[TOKEN BUDGET WARNING\]/);
    expect(ledger.takeOwnWarning()).toBeUndefined();
    expect(ledger.spendOwn(spent(10))).toEqual([]);
  });

  it('answers the request that crosses a threshold with its own seq (what the asker waits for), warning included', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 100, cost_usd: 0 } });
    ledger.lease({ agent: 'b', seq: 1, spent: ZERO_SPEND, want: { tokens: 100, cost_usd: 0 } });
    const notices = ledger.lease({
      agent: 'a',
      seq: 2,
      spent: spent(3300),
      want: { tokens: 100, cost_usd: 0 },
    });
    expect(notices.filter((notice) => notice.agent === 'a')).toHaveLength(1);
    expect(answerTo(notices, 'a')).toMatchObject({
      seq: 2,
      warning: expect.stringMatching(/^\[TOKEN BUDGET WARNING\]/),
    });
    expect(answerTo(notices, 'b')).toMatchObject({
      seq: 0,
      warning: expect.stringMatching(/^\[TOKEN BUDGET WARNING\]/),
    });
  });

  it('stops the whole tree at hard_stop_threshold: every holder is told, the root refuses its next call', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 500, cost_usd: 0 } });
    const notices = ledger.lease({
      agent: 'b',
      seq: 1,
      spent: spent(4100),
      want: { tokens: 100, cost_usd: 0 },
    });
    expect(answerTo(notices, 'a').stop).toBe('token_capped');
    expect(answerTo(notices, 'b').stop).toBe('token_capped');
    expect(ledger.reserveOwn({ tokens: 1, cost_usd: 0 })).toBe('token_capped');
  });

  it('reads money against max_cost_usd and stops with cost_capped', () => {
    const ledger = new TreeLedger({ max_cost_usd: 0.01, warn_threshold: 0.5, hard_stop_threshold: 1 });
    expect(ledger.reserveOwn({ tokens: 1_000_000, cost_usd: 0.004 })).toBeUndefined();
    expect(ledger.reserveOwn({ tokens: 1, cost_usd: 0.02 })).toBe('cost_capped');
    ledger.spendOwn(spent(100, 0.011));
    expect(ledger.reserveOwn({ tokens: 1, cost_usd: 0 })).toBe('cost_capped');
  });

  it('stops on an input limit read from what was spent', () => {
    const ledger = new TreeLedger({ max_input_tokens: 1000, warn_threshold: 0.8, hard_stop_threshold: 1 });
    ledger.spendOwn({ ...ZERO_SPEND, input_tokens: 1000, total_tokens: 1000 });
    expect(ledger.state.stopped).toBe('token_capped');
  });

  it('carries its state as plain JSON: a continued root goes on where it was', () => {
    const ledger = new TreeLedger(TOKENS);
    ledger.lease({ agent: 'a', seq: 1, spent: ZERO_SPEND, want: { tokens: 1000, cost_usd: 0 } });
    ledger.spendOwn(spent(700));
    const continued = new TreeLedger(TOKENS, JSON.parse(JSON.stringify(ledger.state)));
    expect(continued.available()).toEqual(ledger.available());
    expect(continued.spent()).toEqual(ledger.spent());
  });
});

describe('Allotment: an agent spends from what it holds', () => {
  it('asks only when a call does not fit, and never shrinks on a stale answer', () => {
    const allotment = new Allotment('a', { tokens: true, usd: false });
    expect(allotment.covers({ tokens: 1, cost_usd: 0 })).toBe(false);
    const first = allotment.ask({ tokens: 1000, cost_usd: 0 });
    expect(first.seq).toBe(1);
    allotment.apply({ seq: 1, granted: { tokens: 1500, cost_usd: 0 } });
    allotment.spend(spent(900));
    expect(allotment.covers({ tokens: 600, cost_usd: 0 })).toBe(true);
    expect(allotment.covers({ tokens: 601, cost_usd: 0 })).toBe(false);
    allotment.apply({ seq: 0, granted: { tokens: 1000, cost_usd: 0 } });
    expect(allotment.held().tokens).toBe(600);
  });

  it('keeps a warning for the next call, once, and a stop for good', () => {
    const allotment = new Allotment('a', { tokens: true, usd: false });
    allotment.apply({ seq: 0, granted: { tokens: 0, cost_usd: 0 }, warning: 'wrap up' });
    allotment.apply({ seq: 0, granted: { tokens: 0, cost_usd: 0 }, warning: 'wrap up' });
    expect(allotment.takeWarning()).toBe('wrap up');
    expect(allotment.takeWarning()).toBeUndefined();
    allotment.apply({ seq: 0, granted: { tokens: 0, cost_usd: 0 }, stop: 'cost_capped' });
    expect(allotment.state.stopped).toBe('cost_capped');
  });

  it('hands back what it holds with its final spend', () => {
    const allotment = new Allotment('a', { tokens: true, usd: true });
    allotment.ask({ tokens: 10, cost_usd: 0.1 });
    allotment.spend(spent(40, 0.05));
    expect(allotment.release()).toMatchObject({
      agent: 'a',
      seq: 2,
      done: true,
      spent: { total_tokens: 40 },
    });
  });
});
