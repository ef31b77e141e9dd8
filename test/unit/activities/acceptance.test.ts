/**
 * The acceptance activity: every criterion of an item decided in order, file criteria only inside the item's
 * workspace (no `..`, no absolute path, no symbolic link out), and a huge file read only in its first part.
 */
import { mkdir, open, symlink, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { createAcceptanceActivities } from '../../../activities/acceptance';
import { MAX_ACCEPTANCE_READ_BYTES } from '../../../contracts/batch-items';
import { makeFixture, removeFixture, type Fixture } from './tools/workspace-fixture';

const { checkAcceptance } = createAcceptanceActivities();

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
  await writeFile(path.join(fx.outside, 'secret.txt'), 'TOP-SECRET\n');
  await mkdir(path.join(fx.workspace, 'out'));
  await writeFile(path.join(fx.workspace, 'out', 'report.md'), '# Report\ntotal: 42\n');
});

afterEach(async () => {
  await removeFixture(fx);
});

/** The checks of one call, for the criteria given, against this answer and the fixture's workspace. */
async function checks(criteria: string[], answer = 'Done. total: 42') {
  return (await checkAcceptance({ criteria, answer, workspace: fx.workspace })).checks;
}

describe('checkAcceptance', () => {
  it('decides a pattern that backtracks exponentially within a second, the worker serving other work', async () => {
    // On JavaScript's RegExp `(a+)+b` over 28 characters pins the thread for many seconds (minutes at
    // 32): no timer, heartbeat or other activity runs meanwhile.
    const started = performance.now();
    let timerFiredAt: number | undefined;
    const otherWork = new Promise<void>((resolve) =>
      setTimeout(() => {
        timerFiredAt = performance.now() - started;
        resolve();
      }, 20),
    );
    const answers = ['a'.repeat(28), 'a'.repeat(28) + 'b'];
    const verdicts = await Promise.all(
      answers.map((answer) =>
        checkAcceptance({ criteria: ['matches: (a+)+b'], answer, workspace: fx.workspace }),
      ),
    );
    await otherWork;
    expect(verdicts.map((verdict) => verdict.passed)).toEqual([false, true]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(timerFiredAt).toBeLessThan(1000);
  });

  it('passes every form that holds, in the order given', async () => {
    const criteria = [
      'contains: total: 42',
      'not_contains: FAILED',
      'matches: total: \\d+$',
      'file_exists: out/report.md',
      'file_contains: ./out/report.md :: total: 42',
    ];
    expect(await checkAcceptance({ criteria, answer: 'Done. total: 42', workspace: fx.workspace })).toEqual({
      passed: true,
      checks: criteria.map((criterion) => ({ criterion, passed: true })),
    });
  });

  it('fails each form that does not hold, saying why, and the verdict with them', async () => {
    await symlink('report.md', path.join(fx.workspace, 'out', 'latest.md'));
    const verdict = await checkAcceptance({
      criteria: [
        'contains: total: 43',
        'not_contains: Done',
        'matches: ^total',
        'file_exists: out/missing.md',
        'file_exists: out',
        'file_contains: out/latest.md :: total: 43',
        'file_contains: out/report.md/x :: y',
        'the tests pass',
        'file_exists: out/latest.md',
      ],
      answer: 'Done. total: 42',
      workspace: fx.workspace,
    });
    expect(verdict).toEqual({
      passed: false,
      checks: [
        {
          criterion: 'contains: total: 43',
          passed: false,
          detail: 'the answer does not contain "total: 43"',
        },
        {
          criterion: 'not_contains: Done',
          passed: false,
          detail: 'the answer contains "Done" (at character 1)',
        },
        {
          criterion: 'matches: ^total',
          passed: false,
          detail: 'the answer (15 characters) has no match for /^total/',
        },
        {
          criterion: 'file_exists: out/missing.md',
          passed: false,
          detail: '"out/missing.md" does not exist in the workspace',
        },
        { criterion: 'file_exists: out', passed: false, detail: '"out" is a directory, not a file' },
        {
          criterion: 'file_contains: out/latest.md :: total: 43',
          passed: false,
          detail: '"out/latest.md" does not contain "total: 43"',
        },
        {
          criterion: 'file_contains: out/report.md/x :: y',
          passed: false,
          detail: '"out/report.md/x": a part of this path is a file, not a directory',
        },
        {
          criterion: 'the tests pass',
          passed: false,
          detail: expect.stringMatching(/^"the tests pass" is not a criterion this checks \(write one of: /),
        },
        // A link that stays inside the workspace is followed.
        { criterion: 'file_exists: out/latest.md', passed: true },
      ],
    });
  });

  it('refuses a symbolic link out of the workspace, to a file or through a folder', async () => {
    await symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.workspace, 'leak.txt'));
    await symlink('../outside', path.join(fx.workspace, 'elsewhere'));
    expect(
      await checks([
        'file_exists: leak.txt',
        'file_contains: leak.txt :: TOP-SECRET',
        'file_contains: elsewhere/secret.txt :: TOP-SECRET',
      ]),
    ).toEqual([
      {
        criterion: 'file_exists: leak.txt',
        passed: false,
        detail: 'path "leak.txt" leads outside the workspace through a symbolic link',
      },
      {
        criterion: 'file_contains: leak.txt :: TOP-SECRET',
        passed: false,
        detail: 'path "leak.txt" leads outside the workspace through a symbolic link',
      },
      {
        criterion: 'file_contains: elsewhere/secret.txt :: TOP-SECRET',
        passed: false,
        detail: 'path "elsewhere/secret.txt" leads outside the workspace through a symbolic link',
      },
    ]);
  });

  it('refuses `..` and absolute paths, even to a file that exists', async () => {
    const secret = path.join(fx.outside, 'secret.txt');
    expect(
      await checks([
        'file_exists: ../outside/secret.txt',
        'file_contains: ../outside/secret.txt :: TOP-SECRET',
        `file_exists: ${secret}`,
      ]),
    ).toEqual([
      {
        criterion: 'file_exists: ../outside/secret.txt',
        passed: false,
        detail:
          '"file_exists: ../outside/secret.txt" has ".." in its path (write a path inside the workspace, e.g. out/report.md)',
      },
      {
        criterion: 'file_contains: ../outside/secret.txt :: TOP-SECRET',
        passed: false,
        detail: expect.stringContaining('has ".." in its path'),
      },
      {
        criterion: `file_exists: ${secret}`,
        passed: false,
        detail: expect.stringContaining('names an absolute path'),
      },
    ]);
  });

  it('reads only the first part of a huge file, and says so', async () => {
    const huge = path.join(fx.workspace, 'huge.log');
    const size = 1024 * 1024 * 1024;
    const handle = await open(huge, 'w');
    try {
      // Sparse: a gigabyte on paper, two short writes on disk.
      await handle.write('early marker\n', 0);
      await handle.write('late marker\n', size - 100);
      await handle.truncate(size);
    } finally {
      await handle.close();
    }
    expect(
      await checks(['file_contains: huge.log :: early marker', 'file_contains: huge.log :: late marker']),
    ).toEqual([
      { criterion: 'file_contains: huge.log :: early marker', passed: true },
      {
        criterion: 'file_contains: huge.log :: late marker',
        passed: false,
        detail:
          '"huge.log" does not contain "late marker" in its first 4,194,304 bytes (the file is 1,073,741,824 ' +
          'bytes; file_contains reads at most 4,194,304)',
      },
    ]);
    expect(MAX_ACCEPTANCE_READ_BYTES).toBe(4 * 1024 * 1024);
  });

  it('finds text right up to the read limit, and not one byte past it', async () => {
    const text = 'NEEDLE';
    const file = path.join(fx.workspace, 'edge.bin');
    const ending = Buffer.alloc(MAX_ACCEPTANCE_READ_BYTES, 0x2e);
    ending.write(text, MAX_ACCEPTANCE_READ_BYTES - text.length);
    await writeFile(file, ending);
    expect(await checks([`file_contains: edge.bin :: ${text}`])).toEqual([
      { criterion: `file_contains: edge.bin :: ${text}`, passed: true },
    ]);

    const past = Buffer.concat([
      Buffer.alloc(MAX_ACCEPTANCE_READ_BYTES - text.length + 1, 0x2e),
      Buffer.from(text),
    ]);
    await writeFile(file, past);
    expect((await checks([`file_contains: edge.bin :: ${text}`]))[0]).toMatchObject({ passed: false });
  });

  it('fails file criteria in a workspace that does not exist, and still decides the answer', async () => {
    const workspace = path.join(fx.root, 'never-made');
    expect(
      await checkAcceptance({
        criteria: ['contains: done', 'file_exists: out.txt'],
        answer: 'done',
        workspace,
      }),
    ).toEqual({
      passed: false,
      checks: [
        { criterion: 'contains: done', passed: true },
        {
          criterion: 'file_exists: out.txt',
          passed: false,
          detail: `the workspace ${workspace} does not exist`,
        },
      ],
    });
  });

  it('refuses a relative workspace at once (not retried)', async () => {
    const failure = await checkAcceptance({
      criteria: ['file_exists: out.txt'],
      answer: '',
      workspace: 'relative/ws',
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      message: 'workspace: "relative/ws" is not an absolute path',
      nonRetryable: true,
    });
  });
});
