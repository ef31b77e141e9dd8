// ESLint checks correctness and the floors; Prettier owns formatting (`npm run lint` runs `prettier --check`,
// `npm run format` writes).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The floors, top to bottom (DESIGN §2): each imports only floors below it. bench/ and test/ stand on top.
 * A relative import is matched at any depth (`../client/…` as `../../client/…`).
 */
const FLOORS = ['cli', 'devserver', 'client', 'worker', 'workflows', 'activities', 'payloads', 'contracts'];

/** The pattern that refuses, in `floor`'s files, an import of any floor above it. */
function floorPattern(floor) {
  const above = FLOORS.slice(0, FLOORS.indexOf(floor));
  return {
    regex: `^(\\.\\./)+(${above.join('|')})(/|$)`,
    message: `${floor}/ imports only the floors below it (${FLOORS.join(' → ')}).`,
  };
}

const NODE_APIS = ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'http', 'https', 'net'];

/** Patterns besides the floor rule, for the floors that have more. */
const MORE = {
  workflows: [
    { group: NODE_APIS, message: 'Workflows must stay deterministic: no Node APIs.' },
    {
      regex: '^(\\.\\./)+activities(/|$)',
      allowTypeImports: true,
      message: 'Workflows import activity types only (import type).',
    },
  ],
  contracts: [
    {
      group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto'],
      message: 'contracts/ is imported by workflows: no Node APIs.',
    },
  ],
};

/**
 * The command renders, the client knows: a `cli/` file reads and starts through client/ (and devserver/,
 * payloads/, contracts/), never workflows/ or activities/, and of worker/ nothing but what CLI_WORKER_IMPORTS
 * lets a file take. cli/demo/ builds a demo project's worker and stands outside the rule.
 */
const CLI_PATTERNS = [
  {
    regex: '^(\\.\\./)+(workflows|activities)(/|$)',
    message:
      'cli/ renders what client/ reads: it never imports workflows/ or activities/ (docs/architecture.md).',
  },
];
/**
 * The minimum a command takes of worker/, by file and module; docs/architecture.md ("What a command takes of
 * worker/") says why each. A command that runs a worker in its own process: `run`/`start` (the embedded worker,
 * its runtime, its signals) and `worker` (worker-main); one that ends on a signal as a worker does (shutdown);
 * one that checks what a worker on this machine would have: `doctor` (diagnostics, the payload codec's
 * description), `skills list` (the worker's skills catalog), `mcp list` (the worker's MCP servers).
 */
const CLI_WORKER_IMPORTS = {
  'cli/run-session.ts': [
    'worker',
    'runtime',
    'config-digest',
    'mcp',
    'lead-inputs',
    'tracing',
    'workspace-hosting',
    'diagnostics',
  ],
  'cli/run-command.ts': ['runtime', 'shutdown', 'diagnostics'],
  'cli/run-interrupts.ts': ['shutdown'],
  'cli/server-commands.ts': ['runtime', 'shutdown', 'worker-main'],
  'cli/codec-server-command.ts': ['shutdown'],
  'cli/serve-command.ts': ['shutdown'],
  'cli/doctor.ts': ['worker-main', 'diagnostics'],
  'cli/doctor-models.ts': ['diagnostics'],
  'cli/skills-command.ts': ['skills'],
  'cli/mcp-command.ts': ['mcp'],
};

/** The pattern that refuses, in a cli/ file, any worker/ module but `allowed`. */
function cliWorkerPattern(allowed) {
  const except = allowed.length === 0 ? '' : `(?!(${allowed.join('|')})$)`;
  return {
    regex: `^(\\.\\./)+worker(/${except}|$)`,
    message:
      'cli/ takes of worker/ only what CLI_WORKER_IMPORTS lets the file take (eslint.config.mjs); the rest ' +
      'comes through client/ (docs/architecture.md).',
  };
}

const cliRules = [
  {
    files: ['cli/**/*.ts'],
    ignores: ['cli/demo/**', ...Object.keys(CLI_WORKER_IMPORTS)],
    rules: { 'no-restricted-imports': ['error', { patterns: [...CLI_PATTERNS, cliWorkerPattern([])] }] },
  },
  ...Object.entries(CLI_WORKER_IMPORTS).map(([file, allowed]) => ({
    files: [file],
    rules: { 'no-restricted-imports': ['error', { patterns: [...CLI_PATTERNS, cliWorkerPattern(allowed)] }] },
  })),
];

/**
 * No function over 120 lines on any floor. Every line counts, blank lines and comments too: that is what a
 * reader scrolls through. A file still being split elsewhere may get a commented 'warn' override after this one,
 * for a while.
 */
const functionLengthRules = [
  {
    files: FLOORS.map((floor) => `${floor}/**/*.ts`),
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
];

const floorRules = FLOORS.slice(1).map((floor) => ({
  files: [`${floor}/**/*.ts`],
  rules: {
    'no-restricted-imports': ['error', { patterns: [floorPattern(floor), ...(MORE[floor] ?? [])] }],
  },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { console: 'readonly', process: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    files: ['jest.config.js'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  ...floorRules,
  ...cliRules,
  ...functionLengthRules,
  {
    // A local activity's failure reaches workflow code bare, not as an ActivityFailure: workflows/local-activities.ts
    // makes them alike, so every local activity is made there.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/local-activities.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportSpecifier[imported.name='proxyLocalActivities']",
          message: 'Make local activities with localActivities (workflows/local-activities.ts).',
        },
      ],
    },
  },
  {
    // The command's documented entry point (`node dist/client/cli.js`, the package's bin): it only runs cli/cli.ts.
    files: ['client/cli.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Benchmarks share the tests' helpers (test/support/), nothing else of the tests.
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+test/(?!support/)',
              message: 'bench/ imports test/support/ only, not the tests.',
            },
          ],
        },
      ],
    },
  },
);
