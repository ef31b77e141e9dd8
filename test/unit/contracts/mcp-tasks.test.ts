/**
 * Long-running MCP tasks, the pure layer: DeerFlow's `mcp_tasks:` keys and ranges, a server's `task_toolsets`,
 * when the next status call is due (DeerFlow's backoff and input-required interval), and the text the model reads.
 */
import { ConfigError, parseConfig } from '../../../contracts/config';
import { taskToolsetsWithoutRuntime } from '../../../contracts/config/mcp-tasks';
import {
  inputRequiredQuestion,
  mcpTaskWorkflowId,
  nextPollSeconds,
  taskEndText,
  type McpTaskPolling,
} from '../../../contracts/mcp-tasks';
import { assignDelegationIds } from '../../../workflows/delegation/delegation-ids';

const polling: McpTaskPolling = {
  poll_interval_seconds: 5,
  max_poll_backoff_seconds: 300,
  input_required_poll_interval_seconds: 60,
  tracking_degraded_after_errors: 3,
  max_result_bytes: 1024,
  result_preview_max_chars: 100,
};

const toolset = {
  name: 'report-generation',
  submit_tool: 'submit_report',
  status_tool: 'get_report_status',
  cancel_tool: 'cancel_report',
};

describe('mcp_tasks: in the config', () => {
  it("reads DeerFlow's section with its defaults", () => {
    const { config, warnings } = parseConfig({ mcp_tasks: { enabled: true } });
    expect(warnings).toEqual([]);
    expect(config.mcp_tasks).toEqual({
      enabled: true,
      poll_interval_seconds: 5,
      lease_seconds: 120,
      max_concurrent_polls: 8,
      max_poll_backoff_seconds: 300,
      input_required_poll_interval_seconds: 60,
      tracking_degraded_after_errors: 3,
      max_result_bytes: 65_536,
      result_preview_max_chars: 2_000,
    });
  });

  it("refuses a value outside DeerFlow's range, naming it", () => {
    expect(() => parseConfig({ mcp_tasks: { poll_interval_seconds: 0 } })).toThrow(
      'mcp_tasks.poll_interval_seconds: 0 is out of range (1–300)',
    );
  });

  it('takes task_toolsets on a server, and refuses one tool in two roles', () => {
    const server = { url: 'http://127.0.0.1:1/mcp', task_toolsets: [toolset] };
    expect(
      parseConfig({ mcp_servers: { reports: server } }).config.mcp_servers.reports.task_toolsets,
    ).toEqual([toolset]);
    const twice = { ...server, task_toolsets: [{ ...toolset, cancel_tool: 'get_report_status' }] };
    expect(() => parseConfig({ mcp_servers: { reports: twice } })).toThrow(ConfigError);
    expect(() => parseConfig({ mcp_servers: { reports: twice } })).toThrow(
      /task_toolsets\[0\]\.cancel_tool: .*already report-generation\.status_tool/,
    );
  });

  it('refuses task toolsets while mcp_tasks is off, as DeerFlow does', () => {
    const servers = { reports: { enabled: true, task_toolsets: [toolset] } };
    expect(taskToolsetsWithoutRuntime(servers, undefined)).toEqual([
      expect.stringMatching(/^mcp_servers\.reports\.task_toolsets: .*mcp_tasks\.enabled: true is required/),
    ]);
    const { config } = parseConfig({ mcp_tasks: { enabled: true } });
    expect(taskToolsetsWithoutRuntime(servers, config.mcp_tasks)).toEqual([]);
    expect(
      taskToolsetsWithoutRuntime({ reports: { ...servers.reports, enabled: false } }, undefined),
    ).toEqual([]);
  });
});

describe('when the next status call is due', () => {
  it('polls every poll_interval_seconds, or as the server hints', () => {
    expect(nextPollSeconds(polling, 0, undefined)).toBe(5);
    expect(nextPollSeconds(polling, 0, { status: 'running', poll_after_seconds: 12 })).toBe(12);
    expect(nextPollSeconds(polling, 0, { status: 'running', poll_after_seconds: 1e9 })).toBe(86_400);
  });

  it('waits at least input_required_poll_interval_seconds while the task waits for input', () => {
    expect(nextPollSeconds(polling, 0, { status: 'input_required', input_required: {} })).toBe(60);
  });

  it('backs off exponentially after transient faults, up to max_poll_backoff_seconds', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 40].map((errors) => nextPollSeconds(polling, errors, undefined))).toEqual([
      5, 10, 20, 40, 80, 160, 300, 300,
    ]);
  });
});

describe('what the model reads', () => {
  it("gives a completed task's result, as JSON unless it is text, with its artifact", () => {
    expect(
      taskEndText('reports__submit_report', { status: 'completed', result: { rows: 3 } }, polling),
    ).toEqual({
      content: '{"rows":3}',
      isError: false,
    });
    expect(
      taskEndText(
        'reports__submit_report',
        {
          status: 'completed',
          result: 'done',
          result_artifact: { uri: 's3://bucket/r.pdf', mime_type: 'application/pdf' },
        },
        polling,
      ).content,
    ).toBe('done\nResult artifact: s3://bucket/r.pdf (application/pdf)');
  });

  it('keeps a preview of a result over max_result_bytes', () => {
    const { content } = taskEndText('t', { status: 'completed', result: 'x'.repeat(5000) }, polling);
    expect(content).toContain('[result truncated: 5000 characters, over max_result_bytes 1024]');
    expect(content.length).toBeLessThan(300);
  });

  it('says a failed or cancelled task as an error', () => {
    expect(taskEndText('t', { status: 'failed', error: 'disk full' }, polling)).toEqual({
      content: 'MCP task "t" failed: disk full',
      isError: true,
    });
    expect(taskEndText('t', { status: 'cancelled' }, polling)).toEqual({
      content: 'MCP task "t" was cancelled.',
      isError: true,
    });
  });

  it("asks the input_required payload's message", () => {
    expect(inputRequiredQuestion({ message: 'Which quarter?' })).toBe('Which quarter?');
    expect(inputRequiredQuestion({ fields: ['quarter'] })).toBe('{"fields":["quarter"]}');
  });
});

it("names the task's workflow under the agent's, where no delegation id can be", () => {
  const id = mcpTaskWorkflowId('run-1', 3, 0);
  expect(id).toBe('run-1/task/mcp@3.0');
  // A model that names its call after it still gets a delegation id of its own.
  expect(assignDelegationIds(['mcp@3.0'], [])).toEqual(['d1']);
});
