import { LocalTaskNotifier, TaskNotifier } from '../events/task-notifier';
import { TaskWatch } from './task-watch';

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
});
