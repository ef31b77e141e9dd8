import { ApplicationFailure } from '@temporalio/common';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transcripts } from '../../../activities/transcripts';
import type { ChatMessage } from '../../../contracts/messages';
import { LocalDirBlobStore } from '../../../payloads/store';
import { sha256Hex } from '../../../workflows/digest';
import { testActivities } from '../../support/activities';
import { tempDir } from '../../support/subagent-input';

const dir = tempDir('transcripts');
// A folder of this file's own: the test deletes blobs in it.
const transcripts = new Transcripts(new LocalDirBlobStore(dir));
const { callModel } = testActivities({ transcripts });
beforeEach(() => transcripts.clearCache());

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

function storedFiles(): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('transcript segments', () => {
  it('store each turn once and resolve the whole transcript from any worker', async () => {
    const first = await transcripts.append(undefined, [{ role: 'system', content: 'sys' }, user('task')]);
    const second = await transcripts.append(first, [assistant('one'), user('more')]);
    expect(second).toMatchObject({ count: 4, chars: 3 + 4 + 3 + 4 });
    // The same turn stored again (a retried activity) is the same segment.
    expect(await transcripts.append(first, [assistant('one'), user('more')])).toEqual(second);
    transcripts.clearCache();
    expect((await transcripts.resolve(second)).map((m) => m.content)).toEqual(['sys', 'task', 'one', 'more']);
  });

  it('composes a fork: the child system message, the lead completed turns, then the child task', async () => {
    const lead = await transcripts.append(undefined, [
      { role: 'system', content: 'lead sys' },
      user('lead task'),
      { role: 'assistant', content: 'read', tool_calls: [{ id: 'c', name: 'ls', args: '{}' }] },
      { role: 'tool', tool_call_id: 'c', name: 'ls', content: 'a.txt' },
    ]);
    const child = [{ role: 'system', content: 'child sys' } as ChatMessage, user('child task')];
    const all = await transcripts.full({ fork_from: lead, messages: child });
    expect(all.map((m) => m.content)).toEqual(['child sys', 'lead task', 'read', 'a.txt', 'child task']);
    const ref = await transcripts.storeSent({ fork_from: lead, messages: child }, all);
    transcripts.clearCache();
    expect(await transcripts.resolve(ref)).toEqual(all);
  });

  it('names the missing segment and the store', async () => {
    const ref = await transcripts.append(undefined, [user('lost soon')]);
    for (const file of storedFiles()) rmSync(file);
    transcripts.clearCache();
    await expect(transcripts.resolve(ref)).rejects.toThrow(
      new RegExp(`transcript segment ${ref.key} is missing from local directory`),
    );
  });

  it('refuses a segment whose bytes were altered, retryably: restoring it heals the call', async () => {
    const ref = await transcripts.append(undefined, [user('original')]);
    const [file] = storedFiles().filter((path) => path.endsWith(ref.key.slice(2)));
    writeFileSync(
      file,
      JSON.stringify({ v: 1, parent: null, count: 1, chars: 5, messages: [user('forged')] }),
    );
    transcripts.clearCache();
    const failure = await transcripts.resolve(ref).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ nonRetryable: false, type: 'TranscriptSegmentAltered' });
    expect((failure as Error).message).toMatch(
      new RegExp(
        `^transcript segment ${ref.key} in local directory .* does not match its hash \\(tampered or corrupted\\)`,
      ),
    );
  });
});

describe('the model activity', () => {
  const model = { name: 'scripted', provider: 'scripted' as const, model: 'demo' };
  const tools = [{ name: 'ls', description: 'List a folder.', parameters: { type: 'object' } }];

  it('answers with a reference to what it was sent; the next call sends the reference and what is new', async () => {
    const first = await callModel({
      model,
      agent_name: 'lead',
      messages: [{ role: 'system', content: 'sys' }, user('Summarise the logs')],
      tools,
      tools_key: sha256Hex(JSON.stringify(tools)),
      system_context: 'LEDGER',
    });
    expect(first.content).toBe('Scripted answer to: Summarise the logs');
    expect(first.transcript_ref).toMatchObject({ count: 2 });
    expect(first.tools_stored).toBe(sha256Hex(JSON.stringify(tools)));
    transcripts.clearCache();
    const second = await callModel({
      model,
      agent_name: 'lead',
      messages: [assistant(first.content), user('And the errors?')],
      transcript_ref: first.transcript_ref,
      tools: [],
      tools_key: first.tools_stored,
    });
    expect(second.content).toBe('Scripted answer to: And the errors?');
    expect(second.transcript_ref).toMatchObject({ count: 4 });
    // The system context was for that call only: the stored transcript is the conversation itself.
    const stored = await transcripts.resolve(second.transcript_ref!);
    expect(stored.map((m) => m.content)).toEqual([
      'sys',
      'Summarise the logs',
      'Scripted answer to: Summarise the logs',
      'And the errors?',
    ]);
  });
});
