export { executeToolCall } from './execute-tool-call';
export { detectBubblewrap, type SandboxProbe } from './sandbox';
export { describeSandbox, type SandboxInUse } from './sandbox-choice';
