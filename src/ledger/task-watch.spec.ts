import { getEventListeners } from 'node:events';
import { LocalTaskNotifier, TaskNotifier } from '../events/task-notifier';
import { TaskWatch } from './task-watch';
import type { TaskEventRecord } from './task-records';

const status = (seq: number): TaskEventRecord => ({
  seq,
  kind: 'status',
  state: 'working',
  message: null,
  artifact: null,
  createdAt: new Date(0),
});

/** A notifier with a database channel: `committed` is this instance's own commit, `announce` the channel's notification. */
class Channel extends TaskNotifier {
  committed(change: { taskId: string; seq: number }): void {
    this.wake(change.taskId, change.seq);
  }
  announce(taskId: string, seq: number): void {
    this.wake(taskId, seq, true);
  }
  healthy(): boolean {
    return true;
  }
  standingChangedAt(): number {
    return 0;
  }
}

/** A watch of `t1` while this instance commits change `seq` to it: `settle()` settles that commit. */
function committingHere(seq = 2) {
  const notifier = new Channel();
  const watch = new TaskWatch(notifier, 't1');
  let settle!: () => void;
  watch.expect(seq, new Promise<void>((resolve) => (settle = resolve)));
  return { notifier, watch, settle };
}

/** What `promise` has resolved to by the next turn of the event loop ('pending' if nothing). */
async function soon<T>(promise: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('TaskWatch', () => {
  const never = new AbortController().signal;

  it('remembers a change made between the read and the wait', async () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    notifier.committed({ taskId: 't1', seq: 2 });
    await expect(watch.changed(never, 10)).resolves.toBe(true);
    await expect(watch.changed(never, 10)).resolves.toBe(false);
    watch.close();
  });

  it('wakes a waiter; changes of other tasks do not', async () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    const waiting = watch.changed(never, 1000);
    notifier.committed({ taskId: 't2', seq: 5 });
    notifier.committed({ taskId: 't1', seq: 3 });
    await expect(waiting).resolves.toBe(true);
    watch.close();
    expect(notifier.listenerCount()).toBe(0);
  });

  it('a change the caller knows already is no news; a later one, or one of unknown seq, is', async () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    notifier.committed({ taskId: 't1', seq: 1 });
    watch.known(1);
    await expect(watch.changed(never, 10)).resolves.toBe(false);
    notifier.committed({ taskId: 't1', seq: 1 });
    await expect(watch.changed(never, 10)).resolves.toBe(false);
    notifier.committed({ taskId: 't1', seq: 2 });
    await expect(watch.changed(never, 10)).resolves.toBe(true);
    notifier.committed({ taskId: 't1', seq: Number.POSITIVE_INFINITY });
    await expect(watch.changed(never, 10)).resolves.toBe(true);
    watch.close();
  });

  it('an aborted call stops waiting', async () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    const abort = new AbortController();
    const waiting = watch.changed(abort.signal);
    abort.abort();
    await expect(waiting).resolves.toBe(false);
    watch.close();
  });

  it('remembers the latest change the channel announced, whatever the caller knows; its own commits do not count', () => {
    const notifier = new Channel();
    const watch = new TaskWatch(notifier, 't1');
    expect(watch.announcedThrough).toBe(Number.NEGATIVE_INFINITY);
    notifier.committed({ taskId: 't1', seq: 3 });
    expect(watch.announcedThrough).toBe(Number.NEGATIVE_INFINITY);
    notifier.announce('t1', 2);
    watch.known(3);
    notifier.announce('t1', 3);
    notifier.announce('t2', 9);
    expect(watch.announcedThrough).toBe(3);
    notifier.announce('t1', 1);
    expect(watch.announcedThrough).toBe(3);
    watch.close();
  });

  it('hands over what this instance committed when it is every change since, up to the latest heard of', () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    watch.hand([status(2), status(3)]);
    notifier.committed({ taskId: 't1', seq: 3 });
    expect(watch.take(1)?.map((e) => e.seq)).toEqual([2, 3]);
    expect(watch.take(3)).toBeNull(); // taken once

    watch.hand([status(4), status(5)]);
    notifier.committed({ taskId: 't1', seq: 5 });
    expect(watch.take(4)?.map((e) => e.seq)).toEqual([5]); // what the caller has is skipped
    watch.close();
  });

  it('reads instead when a change came from elsewhere, before, between or after what was handed', () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    watch.hand([status(3)]);
    notifier.committed({ taskId: 't1', seq: 3 });
    expect(watch.take(1)).toBeNull(); // seq 2 was committed elsewhere

    watch.hand([status(4)]);
    watch.hand([status(6)]); // 5 elsewhere: the run starts again at 6
    notifier.committed({ taskId: 't1', seq: 6 });
    expect(watch.take(3)).toBeNull();

    watch.hand([status(7)]);
    notifier.committed({ taskId: 't1', seq: 8 }); // heard of 8, committed elsewhere
    expect(watch.take(6)).toBeNull();

    watch.hand([status(9)]);
    notifier.committed({ taskId: 't1', seq: Number.POSITIVE_INFINITY }); // some change, unknown which
    expect(watch.take(8)).toBeNull();
    watch.close();
  });

  it('woken by a change before its commit here has settled, takes what the commit hands once it has', async () => {
    const { notifier, watch, settle } = committingHere();
    notifier.announce('t1', 2); // the notification, before the commit's own answer
    const call = new AbortController();
    const taking = watch.takeCommitted(1, call.signal);
    expect(await soon(taking)).toBe('pending'); // waits for the commit under way
    watch.hand([status(2)]);
    settle();
    expect((await taking)?.map((e) => e.seq)).toEqual([2]);
    expect(getEventListeners(call.signal, 'abort')).toHaveLength(0);
    expect(await soon(watch.takeCommitted(2, never))).toBeNull(); // nothing under way: at once
    watch.close();
  });

  it('reads instead when the commit it waited for failed', async () => {
    const { notifier, watch, settle } = committingHere();
    notifier.announce('t1', 2); // committed elsewhere
    const taking = watch.takeCommitted(1, never);
    settle(); // failed: nothing handed
    await expect(taking).resolves.toBeNull();
    watch.close();
  });

  it('waits only for commits of the changes heard of, and no longer than its call or the watch', async () => {
    const later = committingHere(3);
    later.notifier.announce('t1', 2); // 2 committed elsewhere; this instance's commit of 3 is not heard of yet
    expect(await soon(later.watch.takeCommitted(1, never))).toBeNull();
    later.watch.close();

    const aborted = committingHere();
    aborted.notifier.announce('t1', 2);
    const call = new AbortController();
    const taking = aborted.watch.takeCommitted(1, call.signal);
    expect(await soon(taking)).toBe('pending');
    call.abort(); // the caller left
    expect(await soon(taking)).toBeNull();

    const closed = committingHere();
    closed.notifier.announce('t1', 2);
    const left = new AbortController();
    const closing = [closed.watch.takeCommitted(1, left.signal), closed.watch.takeCommitted(1, left.signal)];
    expect(await soon(Promise.race(closing))).toBe('pending');
    closed.watch.close(); // every take waiting ends
    expect(await soon(Promise.all(closing))).toEqual([null, null]);
    expect(getEventListeners(left.signal, 'abort')).toHaveLength(0);
    aborted.watch.close();
  });

  it('keeps no more than a page; a closed watch keeps nothing', () => {
    const notifier = new LocalTaskNotifier();
    const watch = new TaskWatch(notifier, 't1');
    watch.hand(Array.from({ length: 101 }, (_, i) => status(i + 2)));
    notifier.committed({ taskId: 't1', seq: 102 });
    expect(watch.take(1)).toBeNull();
    watch.hand([status(103)]);
    watch.close();
    expect(watch.take(102)).toBeNull();
  });
});
