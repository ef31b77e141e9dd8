/** Every workflow a worker registers (the bundle's entry point). */
export { subagentWorkflow } from './subagent';
