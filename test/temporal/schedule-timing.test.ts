/**
 * `schedule create` holds every timing to the minimum interval as the server matches it (a cron's seconds
 * field, `@every`), and refuses a timing that never fires, before any schedule exists.
 */
import { randomUUID } from 'node:crypto';
import { cliEnv, runCli } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';
import { SubagentsSchedules } from '../../client/schedules';
import { testAddress, testNamespace, useTestClient } from '../harness/temporal';

const testClient = useTestClient();

const cases: [string, string[], RegExp][] = [
  [
    'a cron with a seconds field that fires every second',
    ['--cron', '* * * * * * *'],
    /^subagents: schedule create: cron: "\* \* \* \* \* \* \*" fires 1 s apart \(.*\), under the minimum interval of 60 s .*SUBAGENTS_SCHEDULE_MIN_SECONDS sets another minimum$/,
  ],
  [
    '@every 1s',
    ['--cron', '@every 1s'],
    /^subagents: schedule create: cron: "@every 1s" fires 1 s apart .* under the minimum interval of 60 s/,
  ],
  [
    'an interval with no run within ten years',
    ['--every', '1000000d'],
    /^subagents: schedule create: every: 86400000000 s never fires within 10 years \(give a timing/,
  ],
];

it.concurrent.each(cases)('refuses %s, and creates nothing', async (_label, timing, message) => {
  const name = `timing-${randomUUID().slice(0, 8)}`;
  const finished = await runCli(
    [
      'schedule',
      'create',
      name,
      ...timing,
      'p',
      '--workspace',
      tempDir('schedule-timing'),
      '--address',
      testAddress(),
      '--namespace',
      testNamespace(),
    ],
    cliEnv(),
  );
  expect(finished.stderr.trim()).toMatch(message);
  expect(finished.code).toBe(2);
  const names = (await new SubagentsSchedules(testClient(), testNamespace()).list()).map((s) => s.name);
  expect(names).not.toContain(name);
});

it('takes a cron whose runs are a minute apart or more', async () => {
  const name = `timing-${randomUUID().slice(0, 8)}`;
  const finished = await runCli(
    [
      'schedule',
      'create',
      name,
      '--cron',
      '*/5 * * * *',
      'p',
      '--workspace',
      tempDir('schedule-timing'),
      '--address',
      testAddress(),
      '--namespace',
      testNamespace(),
    ],
    cliEnv(),
  );
  expect(finished.stderr).toBe('');
  expect(finished.code).toBe(0);
  await new SubagentsSchedules(testClient(), testNamespace()).delete(name);
});
