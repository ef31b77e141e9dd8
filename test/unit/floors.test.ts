/**
 * eslint.config.mjs holds the floors (DESIGN §2): an import that runs back up a floor fails lint, at any
 * depth of the importing file; an import of a floor below passes. The real config lints made-up files (in
 * a process of its own: ESLint loads its config as an ES module).
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
    "import { SubagentsClient } from '../client/api';\nimport { findTemporalCli } from '../devserver/temporal-cli';\n",
  'worker/probe.ts':
    "import type * as workflows from '../workflows';\nimport { x } from '../payloads/store';\n",
  'workflows/probe.ts': "import type * as activities from '../activities';\n",
  'bench/support/probe.ts': "import { tempDir } from '../../test/support/subagent-input';\n",
  // cli/ renders what client/ reads: no workflows/ or activities/, of worker/ the bootstrap only.
  'cli/inspect-probe.ts':
    "import type { SubagentStep } from '../workflows/steps';\nimport { McpCatalog } from '../activities/mcp';\n" +
    "import { userSkillCatalog } from '../worker/skills';\nimport { loadConfig } from '../worker/config';\n",
  'cli/doctor.ts':
    "import { machineProbes } from '../activities/tools';\nimport { x } from '../worker/diagnostics';\n",
  'cli/demo/probe.ts': "import { createProjectActivities } from '../../activities';\n",
};

/** How many imports of each case the floor rule refuses. */
function refusals(): Record<string, number> {
  const script = `
    const { join } = require('node:path');
    const { ESLint } = require('eslint');
    const cases = JSON.parse(process.argv[1]);
    (async () => {
      const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
      const out = {};
      for (const [file, code] of Object.entries(cases)) {
        const [result] = await eslint.lintText(code, { filePath: join(${JSON.stringify(ROOT)}, file) });
        out[file] = result.messages.filter((m) => m.ruleId === 'no-restricted-imports').length;
      }
      process.stdout.write(JSON.stringify(out));
    })();`;
  const stdout = execFileSync(process.execPath, ['-e', script, JSON.stringify(CASES)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as Record<string, number>;
}

test('lint refuses an import up a floor, at any depth, and lets imports down a floor pass; cli/ reads through client/', () => {
  expect(refusals()).toEqual({
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
    'cli/inspect-probe.ts': 3,
    'cli/doctor.ts': 1,
    'cli/demo/probe.ts': 0,
  });
});
