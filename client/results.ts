/** A closed workflow's result, as the client's readers and the lead's batch tools read it. */
export { workflowResult } from '../contracts/closing';
