/**
 * Tool results to the live stream: a tool activity wrapped so that, once it has a result, the result is
 * published for its agent (the activity's own context says whose). The result itself is returned unchanged,
 * whatever the stream does.
 */
import type { ToolCallResult } from '../../contracts/tools';
import type { StreamPublishing } from './agent-stream';

export function streamingToolResults<I>(
  execute: (input: I) => Promise<ToolCallResult>,
  publishing: StreamPublishing | undefined,
): (input: I) => Promise<ToolCallResult> {
  if (publishing === undefined) return execute;
  return async (input: I) => {
    const result = await execute(input);
    const stream = publishing.forActivity();
    if (stream !== undefined) {
      stream.toolResult(result);
      await stream.flush();
    }
    return result;
  };
}
