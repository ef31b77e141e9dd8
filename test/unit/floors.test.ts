/**
 * eslint.config.mjs holds the floors (DESIGN §2): an import that runs back up a floor fails lint, at any
 * depth of the importing file; an import of a floor below passes. It holds the 120-line floor too: no function
 * over 120 lines on any floor. The real config lints made-up files (in a process of its own: ESLint loads its
 * config as an ES module).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** File (as if in the repo) → its one line of source. */
const CASES: Record<string, string> = {
  'activities/probe.ts': "import { SubagentsClient } from '../client/api';\n",
  'payloads/deep/probe.ts': "import { loadConfig } from '../../worker/config';\n",
  'workflows/guards/probe.ts': "import { connectionSettings } from '../../client/connection';\n",
  'client/probe.ts': "import { findTemporalCli } from '../devserver/temporal-cli';\n",
  'devserver/probe.ts': "import { main } from '../cli/cli';\n",
  'bench/probe.ts': "import { x } from '../test/temporal/cli.test';\n",
  'cli/probe.ts':
    "import { SubagentsClient } from '../client/api';\nimport { findTemporalCli } from '../devserver/temporal-cli';\n" +
    "import { loadConfig } from '../client/config';\n",
  'worker/probe.ts':
    "import type * as workflows from '../workflows';\nimport { x } from '../payloads/store';\n",
  'workflows/probe.ts': "import type * as activities from '../activities';\n",
  'bench/support/probe.ts': "import { tempDir } from '../../test/support/subagent-input';\n",
  // cli/ renders what client/ reads: no workflows/ or activities/; of worker/ only what a file is allowed.
  'cli/inspect-probe.ts':
    "import type { SubagentStep } from '../workflows/steps';\nimport { McpCatalog } from '../activities/mcp';\n" +
    "import { userSkillCatalog } from '../worker/skills';\nimport { loadConfig } from '../worker/config';\n",
  'cli/doctor.ts':
    "import { machineProbes } from '../activities/tools';\nimport { x } from '../worker/diagnostics';\n" +
    "import { createWorker } from '../worker/worker';\n",
  'cli/mcp-command.ts':
    "import { listMcpServers } from '../worker/mcp';\nimport { loadConfig } from '../worker/config';\n",
  'cli/demo/probe.ts': "import { createProjectActivities } from '../../activities';\n",
};

/** How many messages of `ruleId` lint gives each case. */
function lintMessages(cases: Record<string, string>, ruleId: string): Record<string, number> {
  const script = `
    const { join } = require('node:path');
    const { ESLint } = require('eslint');
    const [cases, ruleId] = [JSON.parse(process.argv[1]), process.argv[2]];
    (async () => {
      const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
      const out = {};
      for (const [file, code] of Object.entries(cases)) {
        const [result] = await eslint.lintText(code, { filePath: join(${JSON.stringify(ROOT)}, file) });
        out[file] = result.messages.filter((m) => m.ruleId === ruleId).length;
      }
      process.stdout.write(JSON.stringify(out));
    })();`;
  const stdout = execFileSync(process.execPath, ['-e', script, JSON.stringify(cases), ruleId], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as Record<string, number>;
}

test('lint refuses an import up a floor, at any depth, and lets imports down a floor pass; cli/ reads through client/', () => {
  expect(lintMessages(CASES, 'no-restricted-imports')).toEqual({
    'activities/probe.ts': 1,
    'payloads/deep/probe.ts': 1,
    'workflows/guards/probe.ts': 1,
    'client/probe.ts': 1,
    'devserver/probe.ts': 1,
    'bench/probe.ts': 1,
    'cli/probe.ts': 0,
    'worker/probe.ts': 0,
    'workflows/probe.ts': 0,
    'bench/support/probe.ts': 0,
    'cli/inspect-probe.ts': 4,
    'cli/doctor.ts': 2,
    'cli/mcp-command.ts': 1,
    'cli/demo/probe.ts': 0,
  });
});

/** A function of `lines` lines in all, blank lines and comments among them. */
function functionOf(lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) =>
    i % 3 === 0 ? '' : i % 3 === 1 ? '  // why' : '  f();',
  );
  return ['export function probe(f: () => void): void {', ...body, '}', ''].join('\n');
}

test('lint refuses a function over 120 lines on every floor, blank lines and comments counted', () => {
  const floors = ['workflows', 'activities', 'client', 'cli', 'worker', 'payloads', 'contracts', 'devserver'];
  const cases = Object.fromEntries(
    floors.flatMap((floor) => [
      [`${floor}/long-probe.ts`, functionOf(121)],
      [`${floor}/short-probe.ts`, functionOf(120)],
    ]),
  );
  const expected = Object.fromEntries(
    floors.flatMap((floor) => [
      [`${floor}/long-probe.ts`, 1],
      [`${floor}/short-probe.ts`, 0],
    ]),
  );
  expect(lintMessages(cases, 'max-lines-per-function')).toEqual(expected);
});
