import type { LedgerEntry } from '../../../../contracts/ledger';
import type { SubagentResult } from '../../../../contracts/subagent';
import {
  applyAdmission,
  applyProgress,
  applyResult,
  CAPPED_GUIDANCE,
  countByStatus,
  countForRun,
  isTerminal,
  leadTokenUsage,
  renderLedgerForPrompt,
  startEntry,
  type EntryStart,
} from '../../../../workflows/delegation/ledger';
import { sha256Hex } from '../../../../workflows/digest';

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:01:00.000Z';
const T2 = '2025-01-01T00:02:00.000Z';

function start(id: string, fields: Partial<EntryStart> = {}): EntryStart {
  return {
    id,
    runId: 'run-1',
    description: `Task ${id}`,
    subagentType: 'general-purpose',
    workflowId: `run-1/task/${id}`,
    ...fields,
  };
}

function result(fields: Partial<SubagentResult> & Pick<SubagentResult, 'status'>): SubagentResult {
  return { turns: 2, ...fields };
}

const USAGE = { input_tokens: 100, output_tokens: 20, total_tokens: 120 };

describe('startEntry', () => {
  it('adds an in_progress entry with its run, child workflow and timestamps', () => {
    const ledger = startEntry([], start('call_1', { modelName: 'gpt-4o-mini' }), T0);
    expect(ledger).toEqual([
      {
        id: 'call_1',
        run_id: 'run-1',
        description: 'Task call_1',
        subagent_type: 'general-purpose',
        status: 'in_progress',
        model_name: 'gpt-4o-mini',
        created_at: T0,
        updated_at: T0,
        workflow_id: 'run-1/task/call_1',
      },
    ]);
  });

  it('caps the description at 200 characters and marks the cut', () => {
    const [entry] = startEntry([], start('c', { description: 'd'.repeat(500) }), T0);
    expect(entry.description).toHaveLength(200);
    expect(entry.description.endsWith('d…')).toBe(true);
    const [exact] = startEntry([], start('c', { description: 'e'.repeat(200) }), T0);
    expect(exact.description).toBe('e'.repeat(200));
  });

  it('never resets an entry that already exists, finished or not', () => {
    const finished = applyResult(
      startEntry([], start('c'), T0),
      'c',
      result({ status: 'completed', result: 'ok' }),
      T1,
    );
    expect(startEntry(finished, start('c', { description: 'again' }), T2)).toEqual(finished);
    const running = startEntry([], start('c'), T0);
    expect(startEntry(running, start('c', { description: 'again' }), T2)).toEqual(running);
  });

  it('leaves the ledger it was given untouched', () => {
    const before = startEntry([], start('a'), T0);
    const copy = structuredClone(before);
    startEntry(before, start('b'), T1);
    expect(before).toEqual(copy);
  });
});

describe('applyResult', () => {
  const running = startEntry([], start('c'), T0);

  it('records the outcome and its structured fields', () => {
    const [entry] = applyResult(
      running,
      'c',
      result({
        status: 'completed',
        stop_reason: 'token_capped',
        result: 'Partial notes.',
        result_brief: 'Partial notes.',
        result_sha256: sha256Hex('Partial notes.'),
        model_name: 'deepseek-chat',
        token_usage: USAGE,
      }),
      T1,
    );
    expect(entry).toEqual({
      ...running[0],
      status: 'completed',
      stop_reason: 'token_capped',
      result_brief: 'Partial notes.',
      result_sha256: sha256Hex('Partial notes.'),
      model_name: 'deepseek-chat',
      token_usage: USAGE,
      updated_at: T1,
    });
    expect(entry.created_at).toBe(T0);
  });

  it('derives a brief of at most 2,000 characters (head and tail kept) and the digest when missing', () => {
    const text = `BEGIN ${'x'.repeat(5000)} END`;
    const [entry] = applyResult(running, 'c', result({ status: 'completed', result: text }), T1);
    expect(entry.result_brief?.length).toBeLessThanOrEqual(2000);
    expect(entry.result_brief?.startsWith('BEGIN ')).toBe(true);
    expect(entry.result_brief?.endsWith(' END')).toBe(true);
    expect(entry.result_sha256).toBe(sha256Hex(text));
  });

  it('records a failure with its error and no result fields', () => {
    const [entry] = applyResult(running, 'c', result({ status: 'failed', error: 'HTTP 401' }), T1);
    expect(entry.status).toBe('failed');
    expect(entry.error).toBe('HTTP 401');
    expect(entry).not.toHaveProperty('result_brief');
    expect(entry).not.toHaveProperty('result_sha256');
    expect(entry).not.toHaveProperty('token_usage');
  });

  it('keeps the first terminal outcome: a second result changes nothing', () => {
    const done = applyResult(running, 'c', result({ status: 'completed', result: 'first' }), T1);
    const again = applyResult(done, 'c', result({ status: 'failed', error: 'late' }), T2);
    expect(again).toEqual(done);
    expect(again[0]).toMatchObject({ status: 'completed', result_brief: 'first', updated_at: T1 });
  });

  it('updates only the entry it names', () => {
    const two = startEntry(running, start('d'), T0);
    const after = applyResult(two, 'd', result({ status: 'cancelled', error: 'stop' }), T1);
    expect(after[0]).toEqual(two[0]);
    expect(after[1].status).toBe('cancelled');
  });

  it('refuses a result for a task call it never started, naming the call', () => {
    expect(() => applyResult(running, 'nope', result({ status: 'completed' }), T1)).toThrow(
      'ledger has no entry for task call "nope" (entries: c)',
    );
  });
});

describe('applyProgress', () => {
  const running = startEntry([], start('c'), T0);

  it('updates a running entry’s model and cumulative usage', () => {
    const [entry] = applyProgress(running, 'c', { modelName: 'm', tokenUsage: USAGE }, T1);
    expect(entry).toMatchObject({
      status: 'in_progress',
      model_name: 'm',
      token_usage: USAGE,
      updated_at: T1,
    });
  });

  it('never downgrades a terminal entry (a late in_progress snapshot is ignored)', () => {
    const done = applyResult(running, 'c', result({ status: 'timed_out', error: 'late' }), T1);
    expect(applyProgress(done, 'c', { tokenUsage: USAGE }, T2)).toEqual(done);
  });
});

describe('admission: entries waiting for an execution slot', () => {
  const queued = startEntry([], start('q', { status: 'queued' }), T0);
  const REFUSED = 'Subagent execution capacity is full (3 running, 64 queued)';

  it('starts a queued entry that is not terminal', () => {
    expect(queued).toEqual([{ ...startEntry([], start('q'), T0)[0], status: 'queued' }]);
    expect(isTerminal('queued')).toBe(false);
    expect(isTerminal('in_progress')).toBe(false);
    expect(isTerminal('failed')).toBe(true);
  });

  it('moves a queued entry to in_progress when its child starts (started_at), and a repeat changes nothing', () => {
    const running = applyAdmission(queued, 'q', 'in_progress', T1);
    expect(running).toEqual([{ ...queued[0], status: 'in_progress', started_at: T1, updated_at: T1 }]);
    expect(applyAdmission(running, 'q', 'in_progress', T2)).toEqual(running);
    expect(queued[0].status).toBe('queued');
  });

  it('records a refusal at admission on a queued entry, and the refusal stays', () => {
    const refused = applyResult(
      queued,
      'q',
      result({ status: 'failed', turns: 0, error: REFUSED, admission_failure: true }),
      T1,
    );
    expect(refused).toEqual([
      { ...queued[0], status: 'failed', error: REFUSED, admission_failure: true, updated_at: T1 },
    ]);
    expect(applyAdmission(refused, 'q', 'in_progress', T2)).toEqual(refused);
    expect(applyResult(refused, 'q', result({ status: 'completed', result: 'late' }), T2)).toEqual(refused);
  });

  it('keeps admission_failure through queued → in_progress → result', () => {
    let ledger = applyAdmission(queued, 'q', 'in_progress', T1);
    ledger = applyResult(
      ledger,
      'q',
      result({ status: 'failed', turns: 0, error: REFUSED, admission_failure: true }),
      T2,
    );
    expect(ledger[0]).toMatchObject({ status: 'failed', admission_failure: true, error: REFUSED });
    ledger = applyAdmission(ledger, 'q', 'queued', T2);
    ledger = applyProgress(ledger, 'q', { tokenUsage: USAGE }, T2);
    expect(ledger[0]).toMatchObject({ status: 'failed', admission_failure: true });
    expect(ledger[0]).not.toHaveProperty('token_usage');
  });

  it('never marks a failure that ran as an admission failure', () => {
    const [entry] = applyResult(queued, 'q', result({ status: 'failed', error: 'HTTP 500' }), T1);
    expect(entry).not.toHaveProperty('admission_failure');
  });

  it('refuses an admission change for a task call it never started', () => {
    expect(() => applyAdmission(queued, 'nope', 'in_progress', T1)).toThrow(
      'ledger has no entry for task call "nope" (entries: q)',
    );
  });

  it('counts queued entries on their own', () => {
    const ledger = startEntry(queued, start('r'), T0);
    expect(countByStatus(ledger, 'run-1')).toMatchObject({ queued: 1, in_progress: 1 });
  });

  it('tells the lead that a queued delegation is waiting for an execution slot', () => {
    const ledger = startEntry(queued, start('r', { description: 'Read the spec' }), T1);
    const lines = renderLedgerForPrompt(ledger, 10_000).split('\n');
    expect(lines.slice(1)).toEqual([
      '- [in_progress] general-purpose "Read the spec" — still running.',
      '- [queued] general-purpose "Task q" — waiting for an execution slot.',
    ]);
  });
});

describe('counting', () => {
  let ledger: LedgerEntry[] = [];
  ledger = startEntry(ledger, start('a', { runId: 'run-0' }), T0);
  ledger = startEntry(ledger, start('b'), T0);
  ledger = startEntry(ledger, start('c'), T0);
  ledger = startEntry(ledger, start('d'), T0);
  ledger = applyResult(ledger, 'a', result({ status: 'completed', result: 'old', token_usage: USAGE }), T1);
  ledger = applyResult(ledger, 'b', result({ status: 'completed', result: 'ok', token_usage: USAGE }), T1);
  ledger = applyResult(ledger, 'c', result({ status: 'failed', error: 'no' }), T1);

  it('counts only the entries of the given run toward its total', () => {
    expect(countForRun(ledger, 'run-1')).toBe(3);
    expect(countForRun(ledger, 'run-0')).toBe(1);
    expect(countForRun(ledger, 'run-2')).toBe(0);
  });

  it('counts a run’s entries by status, every status present', () => {
    expect(countByStatus(ledger, 'run-1')).toEqual({
      queued: 0,
      in_progress: 1,
      completed: 1,
      failed: 1,
      cancelled: 0,
      timed_out: 0,
      polling_timed_out: 0,
    });
  });

  it('sums this run’s children beside the lead, leaving unreported parts absent', () => {
    const lead = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
    expect(leadTokenUsage(ledger, 'run-1', lead)).toEqual({
      lead,
      subagents: USAGE,
      total: { input_tokens: 110, output_tokens: 25, total_tokens: 135 },
    });
    expect(leadTokenUsage(ledger, 'run-1', undefined)).toEqual({ subagents: USAGE, total: USAGE });
    expect(leadTokenUsage(ledger, 'run-2', undefined)).toEqual({});
  });
});

describe('renderLedgerForPrompt', () => {
  const HEADER =
    'Work already delegated (newest first). Do not delegate it again: reuse these results, and delegate ' +
    'again only to retry a failure or to do what is still missing.';

  function ledgerOf(...steps: [EntryStart, SubagentResult | undefined][]): LedgerEntry[] {
    let ledger: LedgerEntry[] = [];
    for (const [entryStart, outcome] of steps) {
      ledger = startEntry(ledger, entryStart, T0);
      if (outcome) ledger = applyResult(ledger, entryStart.id, outcome, T1);
    }
    return ledger;
  }

  it('is empty for an empty ledger', () => {
    expect(renderLedgerForPrompt([], 10_000)).toBe('');
  });

  it('lists every entry newest first with its status, type, description and result or error', () => {
    const ledger = ledgerOf(
      [
        start('a', { description: 'Survey the\nconfig loader' }),
        result({ status: 'completed', result: 'Found 3 files:\na, b, c.' }),
      ],
      [
        start('b', { subagentType: 'bash', description: 'Run the tests' }),
        result({ status: 'completed', stop_reason: 'turn_capped', result: 'Ran 2 of 5 suites.' }),
      ],
      [
        start('c', { subagentType: 'bash', description: 'Build docs' }),
        result({ status: 'failed', error: 'HTTP 401' }),
      ],
      [
        start('d', { description: 'Summarise logs' }),
        result({
          status: 'timed_out',
          error: 'Execution timed out after 900 seconds',
          result: 'Read 1 log.',
        }),
      ],
      [start('e', { description: 'Check links' }), undefined],
    );
    expect(renderLedgerForPrompt(ledger, 10_000)).toBe(
      [
        HEADER,
        '- [in_progress] general-purpose "Check links" — still running.',
        '- [timed_out] general-purpose "Summarise logs" — Error: Execution timed out after 900 seconds Partial result: Read 1 log.',
        '- [failed] bash "Build docs" — Error: HTTP 401',
        `- [completed, capped: turn budget] bash "Run the tests" — ${CAPPED_GUIDANCE} Partial result: Ran 2 of 5 suites.`,
        '- [completed] general-purpose "Survey the config loader" — Result: Found 3 files: a, b, c.',
      ].join('\n'),
    );
  });

  it('gives a capped completion DeerFlow’s reuse guidance', () => {
    expect(CAPPED_GUIDANCE).toBe(
      'hit a guardrail cap with a partial result; reuse it, retry tighter, or raise the per-agent budget ' +
        '(`max_turns` / `token_budget`).',
    );
  });

  const long = (id: string) =>
    [start(id), result({ status: 'completed', result: `${id}: ${'r'.repeat(3000)}` })] as [
      EntryStart,
      SubagentResult,
    ];
  const big = ledgerOf(long('a'), long('b'), long('c'), long('d'), long('e'), long('f'));

  it('stays within its budget at any size', () => {
    for (const maxChars of [0, 50, 150, 300, 500, 900, 1500, 2500, 4000, 8000, 20_000]) {
      expect(renderLedgerForPrompt(big, maxChars).length).toBeLessThanOrEqual(maxChars);
    }
  });

  it('shortens results before it leaves entries out', () => {
    const text = renderLedgerForPrompt(big, 4000);
    expect(text.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(6);
    expect(text).not.toContain('not shown');
    expect(text).toContain('characters omitted');
  });

  it('leaves out the oldest entries when it must, and says how many', () => {
    const text = renderLedgerForPrompt(big, 900);
    const lines = text.split('\n');
    const shown = lines.filter((line) => line.startsWith('- '));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(6);
    expect(shown[0]).toContain('Result: f: ');
    const omitted = 6 - shown.length;
    expect(lines[lines.length - 1]).toBe(
      `(${omitted} more ${omitted === 1 ? 'delegation' : 'delegations'} not shown.)`,
    );
  });

  it('keeps the newest entry with a shorter result rather than showing none', () => {
    const text = renderLedgerForPrompt(big, 400);
    const shown = text.split('\n').filter((line) => line.startsWith('- '));
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatch(/^- \[completed\] general-purpose "Task f" — Result: f: r+/);
    expect(text.endsWith('\n(5 more delegations not shown.)')).toBe(true);
  });

  it('says only how many were left out when no entry fits, and is empty when not even that fits', () => {
    const headerOnly = `${HEADER}\n(6 more delegations not shown.)`;
    expect(renderLedgerForPrompt(big, headerOnly.length)).toBe(headerOnly);
    expect(renderLedgerForPrompt(big, 50)).toBe('');
  });
});
