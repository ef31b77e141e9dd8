/** The report page's builder: colours by outcome, escaping of everything a run holds, one script only. */
import type { LedgerEntry } from '../../../contracts/ledger';
import { defaultReportPath } from '../../../cli/report-command';
import {
  barTone,
  escapeHtml,
  renderReport,
  TONE_COLOURS,
  type ReportBar,
  type RunReport,
} from '../../../cli/report';

const HOSTILE = '<script>window.pwned=1</script><img src=x onerror="pwned=2">';

function bar(fields: Partial<ReportBar> & Pick<ReportBar, 'workflow_id' | 'status'>): ReportBar {
  return {
    kind: 'task',
    depth: 1,
    type: 'general-purpose',
    description: 'Part',
    started_at: '2025-01-01T00:00:01.000Z',
    ended_at: '2025-01-01T00:00:05.000Z',
    ...fields,
  };
}

const entry = (id: string, fields: Partial<LedgerEntry>): LedgerEntry => ({
  id,
  run_id: 'run-1',
  description: `Part ${id}`,
  subagent_type: 'general-purpose',
  status: 'completed',
  created_at: '2025-01-01T00:00:01.000Z',
  updated_at: '2025-01-01T00:00:05.000Z',
  workflow_id: `run-1/task/${id}`,
  ...fields,
});

function report(fields: Partial<RunReport> = {}): RunReport {
  return {
    run_id: 'run-1',
    generated_at: '2025-01-01T00:01:00.000Z',
    open: false,
    status: 'completed',
    bars: [
      bar({
        kind: 'lead',
        depth: 0,
        workflow_id: 'run-1',
        type: 'lead',
        status: 'completed',
        started_at: '2025-01-01T00:00:00.000Z',
        ended_at: '2025-01-01T00:00:10.000Z',
        ui_url: 'http://ui.example/namespaces/default/workflows/run-1',
      }),
      bar({ workflow_id: 'run-1/task/ok', status: 'completed', tokens: 1500, turns: 2 }),
      bar({ workflow_id: 'run-1/task/capped', status: 'completed', stop_reason: 'token_capped' }),
      bar({ workflow_id: 'run-1/task/broken', status: 'failed', error: 'bad request' }),
    ],
    ledger: [entry('ok', {})],
    step_logs: [],
    ...fields,
  };
}

describe('barTone', () => {
  it('colours by outcome: completed, capped, failed, cancelled, timed out, running', () => {
    expect(barTone('completed')).toBe('completed');
    expect(barTone('completed', 'token_capped')).toBe('capped');
    expect(barTone('failed')).toBe('failed');
    expect(barTone('failed', 'turn_capped')).toBe('failed');
    expect(barTone('terminated')).toBe('failed');
    expect(barTone('cancelled')).toBe('cancelled');
    expect(barTone('timed_out')).toBe('timed-out');
    expect(barTone('polling_timed_out')).toBe('timed-out');
    for (const running of ['in_progress', 'queued', 'running']) expect(barTone(running)).toBe('running');
    expect(TONE_COLOURS).toMatchObject({
      completed: '#2e9e44',
      capped: '#e0a100',
      failed: '#d93025',
      cancelled: '#9aa0a6',
      'timed-out': '#f57c00',
      running: '#1a73e8',
    });
  });
});

describe('renderReport', () => {
  it('gives every bar its outcome class, the failed one its error, and every colour its CSS rule', () => {
    const html = renderReport(report());
    const rows = html.match(/<div class="row bar--[a-z-]+ depth-\d"[^>]*>/g) ?? [];
    expect(rows.map((row) => /bar--([a-z-]+)/.exec(row)?.[1])).toEqual([
      'completed',
      'completed',
      'capped',
      'failed',
    ]);
    expect(html).toContain('<div class="error">bad request</div>');
    expect(html).toContain('<span class="stop-reason">token_capped</span>');
    expect(html).toContain('<span class="tokens">1,500 tokens</span><span class="turns">2 turns</span>');
    for (const [tone, colour] of Object.entries(TONE_COLOURS))
      expect(html).toContain(`.bar--${tone} .bar, .tone--${tone} { background: ${colour}; }`);
  });

  it('escapes descriptions, prompts, errors, results and steps; only its own script is allowed to run', () => {
    const html = renderReport(
      report({
        run_id: `run-"${HOSTILE}`,
        prompt: HOSTILE,
        final_output: HOSTILE,
        error: HOSTILE,
        bars: [
          bar({
            workflow_id: `w${HOSTILE}`,
            type: HOSTILE,
            description: HOSTILE,
            status: 'failed',
            error: HOSTILE,
          }),
        ],
        ledger: [entry(HOSTILE, { description: HOSTILE, result_brief: HOSTILE, error: HOSTILE })],
        step_logs: [
          {
            workflow_id: `w${HOSTILE}`,
            type: HOSTILE,
            description: HOSTILE,
            tone: 'failed',
            prompt: HOSTILE,
            steps: [
              {
                seq: 1,
                kind: 'ai',
                text: HOSTILE,
                truncated: false,
                tool_calls: [{ id: HOSTILE, name: HOSTILE, args: HOSTILE, args_truncated: false }],
              },
              {
                seq: 2,
                kind: 'tool',
                text: HOSTILE,
                truncated: false,
                tool_call_id: 'c',
                name: 'ls',
                is_error: true,
              },
            ],
            missing: [HOSTILE],
            outcome: HOSTILE,
          },
        ],
      }),
    );
    expect(escapeHtml(`<a href="x">'&`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
    // One <script> element, the page's own; no tag or attribute of the run's text survives as markup.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/<img/);
    expect(html).toContain(
      '&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;img src=x onerror=&quot;pwned=2&quot;&gt;',
    );
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
    expect(policy).toMatch(/^default-src 'none'; .*script-src 'sha256-[A-Za-z0-9+/=]+'$/);
  });

  it('links only to http(s) pages', () => {
    const html = renderReport(
      report({ bars: [bar({ workflow_id: 'run-1', status: 'completed', ui_url: 'javascript:alert(1)' })] }),
    );
    expect(html).not.toContain('javascript:');
    expect(renderReport(report())).toContain(
      '<a class="ui-link" href="http://ui.example/namespaces/default/workflows/run-1" target="_blank"',
    );
  });

  it('says so when the run left no ledger, and draws a running bar up to when the report was made', () => {
    const html = renderReport(
      report({
        ledger: undefined,
        open: true,
        bars: [
          bar({
            kind: 'lead',
            depth: 0,
            workflow_id: 'run-1',
            status: 'running',
            started_at: '2025-01-01T00:00:00.000Z',
            ended_at: undefined,
          }),
        ],
      }),
    );
    expect(html).toContain('its ledger was not kept');
    expect(html).toContain('running for 1m00s');
    expect(html).toMatch(/class="row bar--running depth-0"/);
    expect(html).toMatch(/style="left:0\.000%;width:100\.000%"/);
  });
});

it('names the default file after the run id, made safe as a file name', () => {
  expect(defaultReportPath('run-20250101T000000Z-abcd1234')).toBe(
    'report-run-20250101T000000Z-abcd1234.html',
  );
  expect(defaultReportPath('a/b c')).toBe('report-a_b_c.html');
});
