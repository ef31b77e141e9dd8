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
 * payloads/, contracts/), never workflows/ or activities/. Of worker/ it takes the process's bootstrap
 * (the config file, the SDK runtime, shutdown signals); the commands that run or check a worker
 * (WORKER_COMMANDS) take the rest of worker/ too, which offers them what they need of activities/. cli/demo/
 * builds a demo project's worker and stands outside the rule.
 */
const CLI_PATTERNS = [
  {
    regex: '^(\\.\\./)+(workflows|activities)(/|$)',
    message:
      'cli/ renders what client/ reads: it never imports workflows/ or activities/ (docs/architecture.md).',
  },
];
const CLI_BOOTSTRAP_ONLY = {
  regex: '^(\\.\\./)+worker/(?!(config|runtime|shutdown)$)',
  message:
    'Of worker/, a command takes the bootstrap only (config, runtime, shutdown); running or checking a worker is for the commands in WORKER_COMMANDS (eslint.config.mjs).',
};
/** The commands that run a worker (worker, run, start) or check what one needs (doctor, skills list, mcp list). */
const WORKER_COMMANDS = [
  'cli/doctor.ts',
  'cli/doctor-models.ts',
  'cli/server-commands.ts',
  'cli/run-session.ts',
  'cli/run-command.ts',
  'cli/skills-command.ts',
  'cli/mcp-command.ts',
];

const cliRules = [
  {
    files: ['cli/**/*.ts'],
    ignores: ['cli/demo/**', ...WORKER_COMMANDS],
    rules: { 'no-restricted-imports': ['error', { patterns: [...CLI_PATTERNS, CLI_BOOTSTRAP_ONLY] }] },
  },
  {
    files: WORKER_COMMANDS,
    rules: { 'no-restricted-imports': ['error', { patterns: CLI_PATTERNS }] },
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
