/**
 * Each agent's text as a reader assembles it from the tree's live stream (docs/live.md): the `text` deltas in
 * order, a turn's pieces dropped when its model call is retried (`interrupted`: a killed worker's attempt, a
 * failed call's), so the text holds every turn once. Pure: the CLI's printers and tree, and tests, fold the
 * same way.
 */
import type { StreamEvent } from '../contracts/stream';

/** What one event did to its agent's text. */
export type TextChange =
  | { kind: 'appended'; text: string }
  /** The current turn's pieces so far were superseded by a retried call (`dropped` of them). */
  | { kind: 'superseded'; dropped: string }
  | { kind: 'turn_started' }
  | undefined;

interface AgentText {
  text: string;
  /** Where the current turn's text starts in `text`. */
  turnStart: number;
}

export class StreamTexts {
  readonly #agents = new Map<string, AgentText>();

  /** Folds one event into its agent's text (by delegation path); what it changed, if anything. */
  add(event: StreamEvent): TextChange {
    const agent = this.#agentOf(event.path);
    switch (event.kind) {
      case 'turn_started':
      case 'turn_ended':
        // A turn that ended is kept whole: a retry's `interrupted` that comes with no `turn_started` before it
        // (its first attempt killed before anything was written) drops nothing of it.
        agent.turnStart = agent.text.length;
        return event.kind === 'turn_started' ? { kind: 'turn_started' } : undefined;
      case 'interrupted': {
        const dropped = agent.text.slice(agent.turnStart);
        agent.text = agent.text.slice(0, agent.turnStart);
        return { kind: 'superseded', dropped };
      }
      case 'text':
        if (!event.text) return undefined;
        agent.text += event.text;
        return { kind: 'appended', text: event.text };
      default:
        return undefined;
    }
  }

  /** The agent's whole text so far ('' for one that has written none). */
  text(path: string): string {
    return this.#agents.get(path)?.text ?? '';
  }

  /** The last line with words on it that the agent wrote, else undefined. */
  newestLine(path: string): string | undefined {
    const lines = this.text(path).split('\n');
    for (let k = lines.length - 1; k >= 0; k--) if (lines[k].trim() !== '') return lines[k].trim();
    return undefined;
  }

  #agentOf(path: string): AgentText {
    let agent = this.#agents.get(path);
    if (agent === undefined) {
      agent = { text: '', turnStart: 0 };
      this.#agents.set(path, agent);
    }
    return agent;
  }
}
