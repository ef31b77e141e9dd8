/** Every workflow a worker registers (the bundle's entry point). */
export { leadRunWorkflow } from './lead-run';
export { subagentWorkflow } from './subagent';
export { admissionWorkflow } from './admission';
export { batchWorkflow } from './batch';
export { memoryWorkflow } from './memory/memory';
export { dailyBudgetWorkflow } from './budget/daily-workflow';
export { forkRunWorkflow } from './fork-run';
export { forkSubagentWorkflow } from './fork-subagent';
export { mcpTaskWorkflow } from './mcp-task';
