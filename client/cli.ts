#!/usr/bin/env node
// `node dist/client/cli.js` is how the README, the package's bin and users start `subagents`, so it stays: it
// only runs the command, which lives in cli/ (the one import up a floor, allowed by name in the lint config).
import { runAsProgram } from '../cli/cli';
runAsProgram();
