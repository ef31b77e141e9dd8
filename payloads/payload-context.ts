import type { SerializationContext } from '@temporalio/common';

/** Which workflow or activity a payload belongs to, for the messages of the codecs. */
export function describeContext(context: SerializationContext): string {
  return context.type === 'workflow'
    ? `workflow ${context.workflowId}`
    : `activity ${context.activityId ?? '(no id)'} of workflow ${context.workflowId ?? '(unknown)'}`;
}
