// ESLint checks correctness; Prettier owns formatting (`npm run format:check`).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node APIs, no activity implementations.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'http', 'https', 'net'],
              message: 'Workflows must stay deterministic: no Node APIs.',
            },
            {
              group: ['../activities/*', '../activities', '**/activities/**'],
              allowTypeImports: true,
              message: 'Workflows import activity types only (import type).',
            },
            {
              group: ['../worker/*', '../client/*'],
              message: 'Workflows import contracts/ and @temporalio/workflow only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto'],
              message: 'contracts/ is imported by workflows: no Node APIs.',
            },
          ],
        },
      ],
    },
  },
);
