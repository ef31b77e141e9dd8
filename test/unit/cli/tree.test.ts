import type { TaskEvent } from '../../../contracts/events';
import type { LeadRunResult, LeadRunStatus } from '../../../contracts/lead';
import type { LedgerEntry } from '../../../contracts/ledger';
import { LEDGER_STATUSES, type RunStopReason } from '../../../contracts/status';
import {
  displayWidth,
  foldTaskProgress,
  formatDuration,
  renderLedgerTable,
  renderSummary,
  renderTree,
  terminalRows,
  type TreeSnapshot,
} from '../../../cli/tree';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const usage = (total: number) => ({ input_tokens: total - 10, output_tokens: 10, total_tokens: total });
const ESC = '\x1b';
/** Drops the SGR colour codes the renderer writes (ESC [ digits m). */
const uncolored = (text: string) => text.split(new RegExp(`${ESC}\\[[0-9;]*m`)).join('');

function entry(
  id: string,
  fields: Partial<LedgerEntry> & Pick<LedgerEntry, 'status'>,
  startedAt = 0,
  endedAt = startedAt,
): LedgerEntry {
  return {
    id,
    run_id: 'run-1',
    description: `Task ${id}`,
    subagent_type: 'general-purpose',
    created_at: at(startedAt),
    updated_at: at(endedAt),
    workflow_id: `run-1/task/${id}`,
    ...fields,
  };
}

function runningSnapshot(): TreeSnapshot {
  return {
    run_id: 'run-1',
    lead: { state: 'running', turns: 2, token_usage: { lead: usage(1234) }, started_at_ms: T0 },
    ledger: [
      entry('a', { status: 'completed', description: 'Audit north', token_usage: usage(2100) }, 0, 4.1),
      entry('b', { status: 'in_progress', subagent_type: 'bash', description: 'Count the lines' }, 10),
      entry('c', { status: 'failed', description: 'Check suppliers', stop_reason: 'turn_capped' }, 0, 9.9),
    ],
    progress: { a: { turns: 3 }, b: { turns: 1, token_usage: usage(300) }, c: { turns: 60 } },
    ui_url: 'http://localhost:8233/namespaces/default/workflows/run-1',
  };
}

describe('renderTree', () => {
  it('shows a queued delegation waiting, and a started one timed from its start with the wait beside', () => {
    const snapshot: TreeSnapshot = {
      run_id: 'run-1',
      lead: { state: 'running', turns: 1, started_at_ms: T0 },
      ledger: [
        entry('a', { status: 'queued', description: 'Wait' }, 0),
        entry('b', { status: 'in_progress', description: 'Ran', started_at: at(5) }, 0),
        entry('c', { status: 'completed', description: 'Done', started_at: at(0.2) }, 0, 2),
        entry('d', { status: 'failed', description: 'Refused', admission_failure: true }, 0, 3),
      ],
      progress: {},
    };
    expect(renderTree(snapshot, { now: T0 + 8_000, color: false }).slice(2)).toEqual([
      '├─ ⋯ general-purpose  Wait     queued · 8.0s',
      '├─ ⠿ general-purpose  Ran      running · 3.0s · waited 5.0s',
      '├─ ✓ general-purpose  Done     completed · 1.8s',
      '└─ ✗ general-purpose  Refused  failed · 3.0s',
    ]);
  });

  it('draws a running run: the link, the lead, then one aligned row per subagent', () => {
    expect(renderTree(runningSnapshot(), { now: T0 + 12_300, color: false })).toEqual([
      'run run-1  http://localhost:8233/namespaces/default/workflows/run-1',
      'lead  running · turn 2 · 1,234 tok · 12.3s',
      '├─ ✓ general-purpose  Audit north      completed · 3 turns · 2,100 tok · 4.1s',
      '├─ ⠿ bash             Count the lines  running · 1 turn · 300 tok · 2.3s',
      '└─ ✗ general-purpose  Check suppliers  failed (capped: turn budget) · 60 turns · 9.9s',
    ]);
  });

  it("draws each running agent's newest line of streamed text under its row, not an ended one's", () => {
    const snapshot: TreeSnapshot = {
      ...runningSnapshot(),
      newest_text: { '': 'Waiting on the counts.', a: 'Audit done.', b: '  3 files have\tmore lines ' },
    };
    expect(renderTree(snapshot, { now: T0 + 12_300, color: false }).slice(1)).toEqual([
      'lead  running · turn 2 · 1,234 tok · 12.3s',
      '│  › Waiting on the counts.',
      '├─ ✓ general-purpose  Audit north      completed · 3 turns · 2,100 tok · 4.1s',
      '├─ ⠿ bash             Count the lines  running · 1 turn · 300 tok · 2.3s',
      '│    › 3 files have more lines',
      '└─ ✗ general-purpose  Check suppliers  failed (capped: turn budget) · 60 turns · 9.9s',
    ]);
    // Cut to the terminal's width like every row.
    const narrow = renderTree(
      { ...snapshot, newest_text: { b: 'x'.repeat(200) } },
      { now: T0 + 12_300, color: false, width: 60 },
    );
    expect(narrow[4]).toBe(`│    › ${'x'.repeat(52)}…`);
    expect(displayWidth(narrow[4])).toBe(60);
  });

  it('draws a finished run with its outcome and links the children that did not complete', () => {
    const snapshot: TreeSnapshot = {
      run_id: 'run-1',
      lead: {
        state: 'finished',
        status: 'completed',
        stop_reason: 'subagent_limit_capped',
        turns: 7,
        token_usage: { lead: usage(45_678), total: usage(99_999) },
        started_at_ms: T0,
        finished_at_ms: T0 + 125_000,
      },
      ledger: [
        entry('a', { status: 'completed', stop_reason: 'loop_capped', token_usage: usage(1_200_000) }, 0, 61),
        entry('b', { status: 'timed_out', subagent_type: 'bash' }, 1, 1.85),
        entry('c', { status: 'cancelled' }, 2, 3),
      ],
      progress: { a: { turns: 12 }, b: { turns: 1 } },
      children_ui_urls: { a: 'http://ui/a', b: 'http://ui/b', c: 'http://ui/c' },
    };
    expect(renderTree(snapshot, { now: T0 + 999_000, color: false, width: 120 })).toEqual([
      'run run-1',
      'lead  completed (capped: delegation limit) · 7 turns · 45,678 tok · 2m05s',
      '├─ ✓ general-purpose  Task a  completed (capped: repeated tool-call loop) · 12 turns · 1,200,000 tok · 1m01s',
      '├─ ◷ bash             Task b  timed out · 1 turn · 850ms',
      '│    http://ui/b',
      '└─ ⊘ general-purpose  Task c  cancelled · 1.0s',
      '     http://ui/c',
    ]);
  });

  it('shows a lead waiting for a run slot as queued, with its place in the queue', () => {
    const snapshot = runningSnapshot();
    snapshot.lead = { ...snapshot.lead, state: 'queued', turns: 0, admission: { running: 100, queued: 4 } };
    expect(renderTree(snapshot, { now: T0 + 3000, color: false })[1]).toBe(
      'lead  queued · position 4, 100 running · 1,234 tok · 3.0s',
    );
  });

  it('shows a finished lead whose result is not read yet as finished', () => {
    const snapshot = runningSnapshot();
    snapshot.lead = { ...snapshot.lead, state: 'finished', finished_at_ms: T0 + 5000 };
    expect(renderTree(snapshot, { now: T0 + 60_000, color: false })[1]).toBe(
      'lead  finished · 2 turns · 1,234 tok · 5.0s',
    );
  });

  it('measures a running subagent up to now and a finished one up to its last update', () => {
    const snapshot = runningSnapshot();
    const [, , done, running] = renderTree(snapshot, { now: T0 + 15_000, color: false });
    const [, , doneLater, runningLater] = renderTree(snapshot, { now: T0 + 200_000, color: false });
    expect(running).toMatch(/ · 5\.0s$/);
    expect(runningLater).toMatch(/ · 3m10s$/);
    expect(done).toBe(doneLater);
  });

  it('gives every ledger status its own glyph', () => {
    const snapshot: TreeSnapshot = {
      ...runningSnapshot(),
      ledger: LEDGER_STATUSES.map((status) => entry(status, { status })),
      progress: {},
    };
    const glyphs = renderTree(snapshot, { now: T0, color: false })
      .slice(2)
      .map((row) => row.slice(3, 4));
    expect(Object.fromEntries(LEDGER_STATUSES.map((status, index) => [status, glyphs[index]]))).toEqual({
      queued: '⋯',
      in_progress: '⠿',
      completed: '✓',
      failed: '✗',
      cancelled: '⊘',
      timed_out: '◷',
      polling_timed_out: '◌',
    });
  });

  it('fits long descriptions into a narrow terminal, the details column still aligned', () => {
    const snapshot = runningSnapshot();
    snapshot.ledger[0].description = 'Audit every northern warehouse for stock below its reorder level';
    snapshot.ledger[1].description = 'Count the lines of every source file under src and compare';
    const lines = renderTree(snapshot, { now: T0 + 12_300, color: false, width: 82 });
    const rows = lines.slice(2);
    for (const row of lines.slice(1)) expect(displayWidth(row)).toBeLessThanOrEqual(82);
    expect(rows.map((row) => row.indexOf('  ', 22))).toEqual([34, 34, 34]);
    expect(rows[1]).toBe('├─ ⠿ bash             Count the l…  running · 1 turn · 300 tok · 2.3s');
    expect(rows[0]).toBe('├─ ✓ general-purpose  Audit every…  completed · 3 turns · 2,100 tok · 4.1s');
    expect(rows[2]).toBe(
      '└─ ✗ general-purpose  Check suppl…  failed (capped: turn budget) · 60 turns · 9.9s',
    );
  });

  it('clips a row that cannot fit even with short descriptions, so no line wraps', () => {
    const lines = renderTree(runningSnapshot(), { now: T0 + 12_300, color: false, width: 50 });
    for (const row of lines.slice(1)) expect(displayWidth(row)).toBeLessThanOrEqual(50);
    expect(lines[4]).toBe('└─ ✗ general-purpose  Check sup…  failed (capped:…');
  });

  it('colours only when asked, and the colours change nothing else', () => {
    const plain = renderTree(runningSnapshot(), { now: T0 + 12_300, color: false });
    const colored = renderTree(runningSnapshot(), { now: T0 + 12_300, color: true });
    expect(plain.join('\n')).not.toContain(ESC);
    expect(colored.map(uncolored)).toEqual(plain);
    expect(colored[2]).toContain(`${ESC}[32m✓`);
    expect(colored[2]).toContain(`${ESC}[32mcompleted`);
    expect(colored[3]).toContain(`${ESC}[33mrunning`);
    expect(colored[4]).toContain(`${ESC}[31mfailed (capped: turn budget)`);
  });

  it('paints capped completions yellow and cancellations grey', () => {
    const snapshot: TreeSnapshot = {
      ...runningSnapshot(),
      ledger: [
        entry('a', { status: 'completed', stop_reason: 'token_capped' }),
        entry('b', { status: 'cancelled' }),
      ],
    };
    const [, , capped, cancelled] = renderTree(snapshot, { now: T0, color: true });
    expect(capped).toContain(`${ESC}[33mcompleted (capped: token budget)`);
    expect(cancelled).toContain(`${ESC}[90mcancelled`);
  });

  it('draws only this run’s subagents and keeps what a model wrote from reaching the terminal', () => {
    const snapshot: TreeSnapshot = {
      ...runningSnapshot(),
      ledger: [
        entry('old', { status: 'completed', run_id: 'run-0', description: 'Earlier run' }),
        entry('x', { status: 'completed', description: `Read\n\tthe ${ESC}[2Jfile` }),
      ],
      progress: {},
    };
    expect(renderTree(snapshot, { now: T0, color: false }).slice(2)).toEqual([
      '└─ ✓ general-purpose  Read the [2Jfile  completed · 0ms',
    ]);
  });

  it('reads progress only for the task ids it holds', () => {
    const snapshot: TreeSnapshot = {
      ...runningSnapshot(),
      ledger: [entry('constructor', { status: 'in_progress' })],
      progress: {},
    };
    expect(renderTree(snapshot, { now: T0 + 1000, color: false })[2]).toBe(
      '└─ ⠿ general-purpose  Task constructor  running · 1.0s',
    );
  });
});

describe('foldTaskProgress', () => {
  const event = (seq: number, fields: Partial<TaskEvent> & Pick<TaskEvent, 'type' | 'task_id'>) =>
    ({ seq, at: at(seq), ...fields }) as TaskEvent;

  it('keeps the latest turns and usage per task, terminal events included', () => {
    const before = { a: { turns: 1 } };
    const after = foldTaskProgress(before, [
      event(1, {
        type: 'task_started',
        task_id: 'b',
        description: 'd',
        subagent_type: 'bash',
        model_name: 'm',
        workflow_id: 'w',
      }),
      event(2, { type: 'task_running', task_id: 'a', turns: 2, token_usage: usage(500) }),
      event(3, { type: 'task_running', task_id: 'b', turns: 1 }),
      event(4, {
        type: 'task_completed',
        task_id: 'a',
        status: 'completed',
        turns: 3,
        token_usage: usage(900),
      }),
    ]);
    expect(after).toEqual({ a: { turns: 3, token_usage: usage(900) }, b: { turns: 1 } });
    expect(before).toEqual({ a: { turns: 1 } });
  });

  it('keeps any task id as an ordinary key', () => {
    const after = foldTaskProgress({}, [event(1, { type: 'task_running', task_id: '__proto__', turns: 2 })]);
    expect(Object.keys(after)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(after, '__proto__')?.value).toEqual({ turns: 2 });
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [850, '850ms'],
    [4000, '4.0s'],
    [4180, '4.1s'],
    [59_999, '59.9s'],
    [60_000, '1m00s'],
    [125_000, '2m05s'],
    [3_599_999, '59m59s'],
    [3_720_000, '1h02m'],
    [90_000_000, '25h00m'],
    [-40, '0ms'],
  ])('%d ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('displayWidth and terminalRows', () => {
  it('counts columns, not code units, and colour codes as nothing', () => {
    expect(displayWidth(`${ESC}[32m✓${ESC}[0m ok`)).toBe(4);
    expect(displayWidth('漢字')).toBe(4);
    expect(displayWidth('e\u0301')).toBe(1);
  });

  it('counts common emoji as the two columns a terminal shows', () => {
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('☕')).toBe(2);
    expect(displayWidth('👍🏽')).toBe(2);
    expect(displayWidth('👨\u200d👩\u200d👧')).toBe(2);
    expect(displayWidth('🇫🇷')).toBe(2);
    expect(displayWidth('done 🚀 ok')).toBe(10);
  });

  it('cuts a description full of emoji at the width, never inside one', () => {
    const ledger = [entry('call_1', { status: 'completed', result_brief: '👍🏽🚀☕'.repeat(20) })];
    const lines = renderLedgerTable(ledger, { color: false, width: 70 });
    for (const row of lines) expect(displayWidth(row)).toBeLessThanOrEqual(70);
    expect(lines[1]).toMatch(/(👍🏽|🚀|☕)…$/u);
  });

  it('counts the rows a long link wraps onto', () => {
    expect(terminalRows(['short', 'x'.repeat(81), ''], 80)).toBe(4);
  });
});

describe('renderLedgerTable', () => {
  const ledger = [
    entry('call_1', {
      status: 'completed',
      token_usage: usage(12_345),
      result_brief: '\nFound 3 items below reorder level.\nDetails follow.',
    }),
    entry('call_2', {
      status: 'failed',
      subagent_type: 'bash',
      stop_reason: 'turn_capped',
      error: 'No text.',
    }),
    entry('call_3', { status: 'cancelled' }),
  ];

  it('prints one aligned row per entry with the result’s first line, or the error', () => {
    expect(renderLedgerTable(ledger, { color: false })).toEqual([
      'ID      TYPE             STATUS     STOP REASON  TOKENS  RESULT',
      'call_1  general-purpose  completed  -            12,345  Found 3 items below reorder level.',
      'call_2  bash             failed     turn_capped       -  error: No text.',
      'call_3  general-purpose  cancelled  -                 -',
    ]);
  });

  it('cuts the result to the width, and colours the status only when asked', () => {
    const lines = renderLedgerTable(ledger, { color: false, width: 70 });
    expect(lines[1]).toBe('call_1  general-purpose  completed  -            12,345  Found 3 item…');
    for (const row of lines) expect(displayWidth(row)).toBeLessThanOrEqual(70);
    const colored = renderLedgerTable(ledger, { color: true, width: 70 });
    expect(colored.map(uncolored)).toEqual(lines);
    expect(colored[1]).toContain(`${ESC}[32mcompleted${ESC}[39m`);
    expect(colored[2]).toContain(`${ESC}[31mfailed${ESC}[39m`);
  });

  it('says so when there were no delegations', () => {
    expect(renderLedgerTable([], { color: false })).toEqual(['(no delegations)']);
  });

  it('adds a cost column when some entry was priced, a dash for one that was not', () => {
    const priced = [{ ...ledger[0], cost_usd: 0.0123 }, ledger[1]];
    expect(renderLedgerTable(priced, { color: false })).toEqual([
      'ID      TYPE             STATUS     STOP REASON  TOKENS     COST  RESULT',
      'call_1  general-purpose  completed  -            12,345  $0.0123  Found 3 items below reorder level.',
      'call_2  bash             failed     turn_capped       -        -  error: No text.',
    ]);
  });
});

describe('renderSummary', () => {
  function result(fields: Partial<LeadRunResult> = {}): LeadRunResult {
    return {
      run_id: 'run-1',
      status: 'completed',
      final_output: 'Reorder 3 items.\nSupplier A first.',
      ledger: [
        entry('a', { status: 'completed', token_usage: usage(2000) }),
        entry('b', { status: 'failed' }),
        entry('c', { status: 'completed', run_id: 'run-0' }),
      ],
      token_usage: { lead: usage(1234), subagents: usage(2000), total: usage(3234) },
      turns: 5,
      ...fields,
    };
  }

  it('prints what the tokens cost when some call was priced', () => {
    const lines = renderSummary(result({ cost_usd: { subagents: 2, total: 2 } }), { color: false });
    expect(lines[4]).toBe('cost    lead not priced · subagents $2.0000 · total $2.0000');
  });

  it('prints the outcome, the work done, the usage, the link, then the answer', () => {
    expect(renderSummary(result(), { color: false, ui_url: 'http://ui/run-1' })).toEqual([
      'run     run-1',
      'status  completed: the lead finished with an answer',
      'work    5 lead turns · 2 delegations (1 completed, 1 failed)',
      'tokens  lead 1,234 · subagents 2,000 · total 3,234',
      'Web UI  http://ui/run-1',
      '',
      'Reorder 3 items.',
      'Supplier A first.',
    ]);
  });

  it.each<[RunStopReason, string]>([
    [
      'token_capped',
      'the lead (or the run as a whole: token_budget) spent its token budget; the answer may be partial',
    ],
    ['cost_capped', 'the run spent its cost budget (token_budget.max_cost_usd); the answer may be partial'],
    ['turn_capped', 'the lead used all its turns; the answer may be partial'],
    ['loop_capped', 'the lead kept repeating the same tool calls and was stopped (loop_detection)'],
    ['subagent_limit_capped', 'the run used all its delegations (subagents.max_total_per_run)'],
    [
      'model_length_capped',
      "the model's last reply was cut at its output limit (models[].max_tokens); the answer may be incomplete",
    ],
  ])('explains the stop reason %s', (stopReason, explanation) => {
    const lines = renderSummary(result({ stop_reason: stopReason }), { color: false });
    expect(lines[1]).toBe('status       completed: the lead stopped at a limit');
    expect(lines[2]).toBe(`stop reason  ${stopReason}: ${explanation}`);
  });

  it.each<[LeadRunStatus, string, string | undefined]>([
    ['completed', 'completed: the lead finished with an answer', undefined],
    ['failed', 'failed: the run stopped on an error', 'HTTP 401: bad key'],
    ['cancelled', 'cancelled: the run was cancelled before the lead finished', 'Run cancelled by user'],
    ['timed_out', 'timed_out: the run ran out of time before the lead finished', undefined],
  ])('explains the status %s', (status, line, error) => {
    const lines = renderSummary(result({ status, ...(error !== undefined && { error }) }), { color: false });
    expect(lines[1]).toBe(`status  ${line}`);
    if (error === undefined) expect(lines[2]).toMatch(/^work/);
    else expect(lines[2]).toBe(`error   ${error}`);
  });

  it('says when usage was not reported rather than printing zero', () => {
    const lines = renderSummary(result({ token_usage: { lead: usage(50), total: usage(50) } }), {
      color: false,
    });
    expect(lines[3]).toBe('tokens  lead 50 · subagents not reported · total 50');
    expect(renderSummary(result({ token_usage: {} }), { color: false })[3]).toBe(
      'tokens  not reported by the provider',
    );
  });

  it('says what the provider’s prompt cache served and took, where it reported that', () => {
    const cached = {
      input_tokens: 5000,
      output_tokens: 100,
      total_tokens: 5100,
      cache_read_tokens: 4000,
      cache_write_tokens: 900,
    };
    const lines = renderSummary(result({ token_usage: { lead: cached, total: cached } }), { color: false });
    expect(lines[3]).toBe(
      'tokens  lead 5,100 (cache read 4,000, written 900) · subagents not reported · total 5,100 (cache read 4,000, written 900)',
    );
  });

  it('marks an empty answer and strips control characters from the model’s text', () => {
    expect(renderSummary(result({ final_output: '  \n' }), { color: false }).at(-1)).toBe('(no answer)');
    expect(renderSummary(result({ final_output: `Done ${ESC}[2J\tnow` }), { color: false }).at(-1)).toBe(
      'Done [2J\tnow',
    );
  });

  it('colours the status and stop reason only when asked', () => {
    const capped = result({ stop_reason: 'turn_capped' });
    expect(renderSummary(capped, { color: false }).join('\n')).not.toContain(ESC);
    const colored = renderSummary(capped, { color: true });
    expect(colored[1]).toContain(`${ESC}[33mcompleted${ESC}[39m`);
    expect(colored[2]).toContain(`${ESC}[33mturn_capped${ESC}[39m`);
    expect(renderSummary(result({ status: 'failed' }), { color: true })[1]).toContain(`${ESC}[31mfailed`);
    expect(colored.map(uncolored)).toEqual(renderSummary(capped, { color: false }));
  });
});

describe('a batch the lead started', () => {
  const running = entry('b1', {
    status: 'in_progress',
    kind: 'batch',
    description: 'Review requirements',
    workflow_id: 'run-1/batch/b1',
    batch: { total: 40 },
  });
  const ended = {
    ...running,
    status: 'completed' as const,
    updated_at: at(95),
    batch: { total: 40, completed: 38, failed: 2, cancelled: 0 },
  };

  it('is one row in the tree: its items while it runs, their counts once it ended', () => {
    const lines = (ledger: LedgerEntry[]) =>
      renderTree(
        { run_id: 'run-1', lead: { state: 'running', turns: 1, started_at_ms: T0 }, ledger, progress: {} },
        { now: T0 + 30_000, color: false, width: 120 },
      ).map(uncolored);
    expect(lines([running]).join('\n')).toMatch(
      /general-purpose {2}batch: Review requirements {2}running · 40 items · 30.0s/,
    );
    expect(lines([ended]).join('\n')).toMatch(
      /✓ general-purpose {2}batch: Review requirements {2}completed · 38 completed, 2 failed of 40 items · 1m ?35(\.0)?s/,
    );
  });

  it('shows its counts in the ledger table and in the summary, apart from the delegations', () => {
    expect(renderLedgerTable([ended], { color: false, width: 100 })[1]).toMatch(
      /^b1 +general-purpose +completed +- +- +batch: 38 completed, 2 failed of 40 items$/,
    );
    const summary = renderSummary(
      {
        run_id: 'run-1',
        status: 'completed',
        final_output: 'Done.',
        ledger: [entry('a', { status: 'completed' }), ended],
        token_usage: {},
        turns: 3,
      },
      { color: false },
    );
    expect(summary).toContain(
      'work    3 lead turns · 1 delegation (1 completed) · batch b1 completed (38 completed, 2 failed of 40 items)',
    );
  });
});
