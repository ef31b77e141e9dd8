/** Every workflow a worker registers (the bundle's entry point). */
export { leadRunWorkflow } from './lead-run';
export { subagentWorkflow } from './subagent';
export { admissionWorkflow } from './admission';
export { batchWorkflow } from './batch';
