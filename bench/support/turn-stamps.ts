/**
 * The model side of a turn benchmark: scripted replies for subagents that each list N folders, one `ls` a turn,
 * then answer, and the two stamps a turn's overhead is measured between, both taken in the fake provider's
 * process on one clock (`performance.timeOrigin + performance.now()`, epoch ms):
 *   - when answer k (a tool call) was fully handed to the network (the server's `sent` hook, last part);
 *   - when request k+1 arrived (read whole, parsed, routed: the moment the responder is asked).
 * A subagent is known by the key in its first user message (`[turn-bench <key>]`), its turn by the number of
 * tool results its request carries. A lead (offered `task`) whose prompt carries `[turn-bench-lead <key>]`
 * delegates its planned subagents in one response, then answers.
 */
import { performance } from 'node:perf_hooks';
import type { FakeChatRequest, FakeReply, FakeResponder } from '../../test/support/fake-openai';

const USAGE = { input_tokens: 100, output_tokens: 10 };

/** How a subagent's `ls` names the folder of turn k: relative (ours) or DeerFlow's virtual absolute path. */
export type PathStyle = 'relative' | 'deerflow';

const DEERFLOW_WORKSPACE = '/mnt/user-data/workspace';

/** The folder turn `k` (1-based) lists. */
export function turnFolder(k: number): string {
  return `d${k}`;
}

interface SubagentPlan {
  turns: number;
  style: PathStyle;
}

/** One turn's overhead: answer k handed to the network → request k+1 arrived (epoch ms, the fake's clock). */
export interface TurnWindow {
  sentAt: number;
  arrivedAt: number;
}

interface Stamp {
  key: string;
  /** Tool results the request carried: 0 for the first request. */
  turn: number;
  arrivedAt: number;
}

function firstUserText(body: FakeChatRequest): string {
  const content = body.messages.find((m) => m.role === 'user')?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

export class TurnStamps {
  private readonly subagents = new Map<string, SubagentPlan>();
  private readonly leads = new Map<string, string[]>();
  private readonly arrivals = new Map<number, Stamp>();
  private readonly sentAt = new Map<number, number>();

  /** The prompt of a subagent that lists `turns` folders. */
  planSubagent(key: string, turns: number, style: PathStyle): string {
    this.subagents.set(key, { turns, style });
    return `[turn-bench ${key}] List the folders d1 to d${turns} of the workspace, one per turn, then say what they hold.`;
  }

  /** The prompt of a lead that delegates the subagents `keys` (planned already) in one response. */
  planLead(key: string, subagents: string[]): string {
    this.leads.set(key, subagents);
    return `[turn-bench-lead ${key}] Delegate ${subagents.length} listing task(s) at once, then report.`;
  }

  readonly respond: FakeResponder = (body, index, view) => {
    const arrivedAt = performance.timeOrigin + performance.now();
    const text = firstUserText(body);
    const turn = view.tool_results.length;
    const lead = /\[turn-bench-lead (\S+)\]/.exec(text)?.[1];
    if (lead !== undefined && view.tools.includes('task')) return this.leadReply(lead, turn);
    const key = /\[turn-bench (\S+)\]/.exec(text)?.[1];
    const plan = key === undefined ? undefined : this.subagents.get(key);
    if (key === undefined || plan === undefined) return { content: 'Nothing planned for this request.' };
    this.arrivals.set(index, { key, turn, arrivedAt });
    if (turn >= plan.turns) return { content: `Listed ${plan.turns} folders.`, usage: USAGE };
    const folder = turnFolder(turn + 1);
    const args =
      plan.style === 'relative'
        ? { path: folder }
        : { description: `list ${folder}`, path: `${DEERFLOW_WORKSPACE}/${folder}` };
    return { tool_calls: [{ name: 'ls', args }], usage: USAGE };
  };

  /** The server's `sent` hook: the last part's stamp is when the whole answer was handed over. */
  readonly sent = (index: number, _part: string | Buffer, at: number): void => {
    this.sentAt.set(index, at);
  };

  /** Answer k sent → request k+1 arrived, for each turn of subagent `key` in order; checks that none is missing. */
  turnWindows(key: string): TurnWindow[] {
    const plan = this.subagents.get(key);
    if (plan === undefined) throw new Error(`no subagent ${key} was planned`);
    const requests = [...this.arrivals.entries()].filter(([, stamp]) => stamp.key === key);
    const byTurn = new Map(requests.map(([index, stamp]) => [stamp.turn, { index, ...stamp }]));
    if (requests.length !== plan.turns + 1 || byTurn.size !== plan.turns + 1) {
      throw new Error(
        `subagent ${key}: expected ${plan.turns + 1} model requests (one a turn), got ${requests.length}`,
      );
    }
    const windows: TurnWindow[] = [];
    for (let turn = 1; turn <= plan.turns; turn++) {
      const previous = byTurn.get(turn - 1);
      const current = byTurn.get(turn);
      const sentAt = previous && this.sentAt.get(previous.index);
      if (!current || sentAt === undefined) throw new Error(`subagent ${key}: turn ${turn} has no stamps`);
      windows.push({ sentAt, arrivedAt: current.arrivedAt });
    }
    return windows;
  }

  /** Per-turn overheads of subagent `key` (ms), in turn order. */
  gaps(key: string): number[] {
    return this.turnWindows(key).map((w) => w.arrivedAt - w.sentAt);
  }

  private leadReply(key: string, turn: number): FakeReply {
    const subagents = this.leads.get(key) ?? [];
    if (turn > 0)
      return { content: `The ${subagents.length} subagent(s) listed their folders.`, usage: USAGE };
    return {
      tool_calls: subagents.map((sub, i) => ({
        name: 'task',
        id: `list${i + 1}`,
        args: {
          description: `Listing ${i + 1}`,
          prompt: this.planned(sub),
          subagent_type: 'general-purpose',
        },
      })),
      usage: USAGE,
    };
  }

  private planned(key: string): string {
    const plan = this.subagents.get(key);
    if (plan === undefined) throw new Error(`the lead delegates ${key}, which was not planned`);
    return this.planSubagent(key, plan.turns, plan.style);
  }
}
