/** The ACP side of remote subagents: a delegation to an agent spawned over stdio, and the provider's probe. */
export { runAcpSubagent } from './run-acp-subagent';
export { probeAcpProvider } from './probe';
