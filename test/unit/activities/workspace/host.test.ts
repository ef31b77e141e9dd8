/**
 * The protocol that keeps a run's files where its history says they are (activities/workspace/host.ts): a home
 * placed on the first host, saves after each change, a move to another host under a new epoch, and a host
 * that lost the run refusing its calls — before a call, and after one that ran while the run moved. Hosts share
 * one record store and one blob store (as a bucket is shared); "another disk" is played by emptying the folder.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  WORKSPACE_FAILURES,
  type HomePlacement,
  type WorkspaceMovedDetails,
} from '../../../../contracts/workspace';
import { WorkspaceHost, sharedMarkerPath } from '../../../../activities/workspace/host';
import { WorkspaceImages } from '../../../../activities/workspace/images';
import { openRecordStore } from '../../../../payloads/records';
import { LocalDirBlobStore } from '../../../../payloads/store';

const SNAPSHOT = { exclude: [], max_bytes: 1 << 30 };

describe('WorkspaceHost', () => {
  let dir: string;
  let workspace: string;
  let store: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'workspace-host-'));
    workspace = join(dir, 'workspace');
    store = join(dir, 'store');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function host(hostId: string, snapshots = true): WorkspaceHost {
    return new WorkspaceHost({
      hostId,
      queue: `q@${hostId}`,
      settings: { mode: 'home', snapshots, snapshot: SNAPSHOT },
      images: new WorkspaceImages({ blobs: new LocalDirBlobStore(join(store, 'blobs')) }),
      records: openRecordStore({ store: 'local', path: store } as never, {}),
    });
  }

  const write = (name: string, text: string) => async () => {
    mkdirSync(join(workspace, name, '..'), { recursive: true });
    writeFileSync(join(workspace, name), text);
    return 'written';
  };

  async function refusal(work: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await work.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof ApplicationFailure)) throw new Error(`expected a refusal, got ${String(err)}`);
    return err;
  }

  it('places a run on the first host that asks, once', async () => {
    const a = host('a');
    const placed = await a.place('run-1', workspace);
    expect(placed).toEqual({
      mode: 'home',
      run_key: 'run-1',
      host_id: 'a',
      queue: 'q@a',
      epoch: 1,
      snapshots: true,
    });
    // Asked again (a retried placing step) from another host: the home stays where it was.
    expect(await host('b').place('run-1', workspace)).toEqual(placed);
  });

  it("places an unplaced run on the host that serves its first call, and sends the others' calls there", async () => {
    const a = host('a');
    const first = await a.serve({ mode: 'unplaced', run_key: 'run-1' }, workspace, true, write('x.txt', 'x'));
    expect(first.placed).toMatchObject({ mode: 'home', host_id: 'a', epoch: 1 });
    expect(first.save?.changed).toBeGreaterThan(0);
    let ran = false;
    const err = await refusal(
      host('b').serve({ mode: 'unplaced', run_key: 'run-1' }, workspace, true, async () => {
        ran = true;
        return 'no';
      }),
    );
    expect(ran).toBe(false);
    expect(err.type).toBe(WORKSPACE_FAILURES.moved);
    expect((err.details?.[0] as WorkspaceMovedDetails).placement).toEqual(first.placed);
  });

  it("refuses, without running it, a call at a home placement that names another host (a workflow's local try)", async () => {
    const placement = (await host('a').place('run-1', workspace)) as HomePlacement;
    let ran = false;
    const err = await refusal(
      host('b').serve(placement, workspace, false, async () => {
        ran = true;
        return 'listed';
      }),
    );
    expect(ran).toBe(false);
    expect(err.type).toBe(WORKSPACE_FAILURES.moved);
    expect(err.details?.[0]).toEqual({ placement, ran: false });
    // Its home serves it.
    expect((await host('a').serve(placement, workspace, false, async () => 'listed')).result).toBe('listed');
  });

  it('saves each change, and a new host restores the newest save after the home is lost', async () => {
    const a = host('a');
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    const first = await a.serve(placement, workspace, true, write('notes/a.txt', 'one'));
    expect(first.save?.changed).toBeGreaterThan(0);
    await a.serve(placement, workspace, true, write('notes/a.txt', 'two'));
    // A read-only call saves nothing.
    expect((await a.serve(placement, workspace, false, async () => 'read')).save).toBeUndefined();

    rmSync(workspace, { recursive: true });
    const b = host('b');
    const moved = await b.relocate(placement, workspace, async () => false);
    expect(moved.placement).toMatchObject({ host_id: 'b', queue: 'q@b', epoch: 2 });
    expect(moved.moved).toMatchObject({ from_host: 'a', files: 1 });
    expect(readFileSync(join(workspace, 'notes/a.txt'), 'utf8')).toBe('two');

    // A second workflow of the run that finds the same home gone learns of the move, and nothing moves again.
    const again = await host('c').relocate(placement, workspace, async () => false);
    expect(again.placement).toEqual(moved.placement);
    expect(again.moved).toBeUndefined();
  });

  it('keeps the workspace where it is while the home lives', async () => {
    const a = host('a');
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    const found = await host('b').relocate(placement, workspace, async () => true);
    expect(found).toEqual({ placement });
  });

  it('refuses a call on a host that lost the run, naming where the workspace lives', async () => {
    const a = host('a');
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    await a.serve(placement, workspace, true, write('x.txt', 'x'));
    const moved = await host('b').relocate(placement, workspace, async () => false);
    let ran = false;
    const err = await refusal(
      a.serve(placement, workspace, true, async () => {
        ran = true;
        return 'no';
      }),
    );
    expect(err.type).toBe(WORKSPACE_FAILURES.moved);
    expect(ran).toBe(false);
    expect(err.details?.[0]).toEqual({
      placement: moved.placement,
      ran: false,
    } satisfies WorkspaceMovedDetails);
  });

  it('does not report a call done that ran while the run moved away', async () => {
    const a = host('a');
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    const err = await refusal(
      a.serve(placement, workspace, true, async () => {
        writeFileSync(join(workspace, 'late.txt'), 'late');
        // The run moves while this call runs (its home was taken for lost).
        await host('b').relocate(placement, workspace, async () => false);
        return 'done';
      }),
    );
    expect(err.type).toBe(WORKSPACE_FAILURES.moved);
    expect((err.details?.[0] as WorkspaceMovedDetails).ran).toBe(true);
    expect(err.message).toMatch(/its changes are not in the workspace/);
  });

  it('waits for a lost home when there is no snapshot to restore, and moves nothing meanwhile', async () => {
    const a = host('a', false);
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    const err = await refusal(host('b', false).relocate(placement, workspace, async () => false));
    expect(err.type).toBe(WORKSPACE_FAILURES.unavailable);
    expect(err.nonRetryable).toBe(false);
    expect(err.message).toMatch(
      /no snapshot of it exists \(workspace.snapshots is off\): waiting for host a/,
    );
    // The home, when it returns, still holds the run: no newer epoch was claimed.
    expect((await a.serve(placement, workspace, false, async () => 'ok')).result).toBe('ok');
  });

  it('restores the folder in place when a restarted worker of the same host finds it gone', async () => {
    const a = host('a');
    const placement = (await a.place('run-1', workspace)) as HomePlacement;
    await a.serve(placement, workspace, true, write('kept.txt', 'kept'));
    rmSync(workspace, { recursive: true });
    const restarted = host('a');
    const read = await restarted.serve(placement, workspace, false, async () =>
      readFileSync(join(workspace, 'kept.txt'), 'utf8'),
    );
    expect(read.result).toBe('kept');
  });

  it('never acts on an empty folder: a placed workspace that is gone is refused', async () => {
    const anywhere = new WorkspaceHost({
      hostId: 'solo',
      queue: 'q',
      settings: { mode: 'anywhere', snapshots: false, snapshot: SNAPSHOT },
    });
    const placement = await anywhere.place('run-1', workspace);
    rmSync(workspace, { recursive: true });
    const err = await refusal(anywhere.serve(placement, workspace, false, async () => 'no'));
    expect(err.type).toBe(WORKSPACE_FAILURES.unavailable);
    expect(err.message).toMatch(/does not exist on host solo/);
    expect(existsSync(workspace)).toBe(false);
  });

  it('in shared mode, refuses on a host that cannot see the run marker', async () => {
    const shared = new WorkspaceHost({
      hostId: 'nfs-1',
      queue: 'q',
      settings: { mode: 'shared', snapshots: false, snapshot: SNAPSHOT },
    });
    const placement = await shared.place('run-1', workspace);
    expect(existsSync(sharedMarkerPath(workspace, 'run-1'))).toBe(true);
    expect((await shared.serve(placement, workspace, true, async () => 'ok')).result).toBe('ok');
    rmSync(sharedMarkerPath(workspace, 'run-1'));
    const err = await refusal(shared.serve(placement, workspace, true, async () => 'no'));
    expect(err.message).toMatch(
      /host nfs-1 cannot see the run's workspace .*is the shared filesystem mounted/,
    );
  });
});
