// Tests run on the compiled output (`npm run build` first): one tsc pass serves the type check, the
// in-process tests and the worker processes that the crash tests spawn.
/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 120000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      roots: ['<rootDir>/dist/test/unit'],
      setupFiles: ['<rootDir>/dist/test/harness/unit-setup.js'],
      testMatch: ['**/*.test.js'],
    },
    {
      // One real Temporal dev server for the whole project, started and always stopped by the harness.
      displayName: 'temporal',
      testEnvironment: 'node',
      roots: ['<rootDir>/dist/test/temporal'],
      testMatch: ['**/*.test.js'],
      globalSetup: '<rootDir>/dist/test/harness/global-setup.js',
      globalTeardown: '<rootDir>/dist/test/harness/global-teardown.js',
    },
  ],
};
