/**
 * An MCP tool's result as the text of a tool message: its text content joined, a line saying what
 * non-text content was left out (images, audio, binary resources), within the server's output cap.
 */
import { capOutput } from '../tools/output';

/** The parts of an MCP `CallToolResult` read here (the SDK's type, loosely: servers send what they send). */
export interface McpResultContent {
  content?: readonly unknown[];
  structuredContent?: unknown;
}

interface ContentItem {
  type?: unknown;
  text?: unknown;
  resource?: { text?: unknown };
}

export function mcpResultText(result: McpResultContent, cap: number): string {
  const texts: string[] = [];
  const dropped: string[] = [];
  for (const raw of result.content ?? []) {
    const item = (typeof raw === 'object' && raw !== null ? raw : {}) as ContentItem;
    if (item.type === 'text' && typeof item.text === 'string') texts.push(item.text);
    else if (item.type === 'resource' && typeof item.resource?.text === 'string')
      texts.push(item.resource.text);
    else dropped.push(typeof item.type === 'string' ? item.type : 'unknown');
  }
  // A tool that answers with structured content alone (outputSchema) is shown that.
  if (texts.length === 0 && result.structuredContent !== undefined) {
    texts.push(JSON.stringify(result.structuredContent));
  }
  const text = texts.join('\n') || (dropped.length === 0 ? '(no output)' : '');
  if (dropped.length === 0) return capOutput(text, cap);
  const count = dropped.length === 1 ? '1 non-text item' : `${dropped.length} non-text items`;
  const note = `[${count} left out (${[...new Set(dropped)].join(', ')}): only text is shown]`;
  // The note is kept whole, after the text cut to the room left.
  const room = Math.max(0, cap - note.length - 1);
  return text === '' || room === 0 ? note : `${capOutput(text, room)}\n${note}`;
}
