#!/usr/bin/env node
// `node dist/client/cli.js` is how the README, the package's bin and users start `subagents`, so it stays: it
// only runs the command, which lives in cli/ (the one import up a floor, allowed by name in the lint config).
import { setFlagsFromString } from 'node:v8';
import { runsNoWorker } from '../cli/command-kinds';

// Before anything else is loaded: V8 keeps its heaps small (`--optimize-for-size`) in every command but a
// long-lived worker, which serves many runs and keeps V8's defaults. A client command (`list`) peaks at ~81 MiB
// instead of ~102, an embedded run's process at ~270 instead of ~335, its run 3–5 % slower (BENCHMARKS.md).
// A command that runs no workflow code (`list`, `status`, `skills`…) is over in a moment: it goes without the
// optimizing compiler too, whose code and bookkeeping cost ~9 MiB (80–86 → 71–74 MiB) and save it no time.
const command = process.argv[2];
if (command !== 'worker') {
  setFlagsFromString('--optimize-for-size');
  setFlagsFromString('--semi-space-growth-factor=1');
}
if (runsNoWorker(command)) setFlagsFromString('--no-opt');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- after the flag: an import would come first
(require('../cli/cli') as typeof import('../cli/cli')).runAsProgram();
