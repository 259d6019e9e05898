import { MAX_REMEMBERED_METADATA_CHARS, RememberedTasks } from './remembered-tasks';
import type { TaskHead } from './task-records';

const row = (id: string, seq: number, metadata: Record<string, unknown> | null = null): TaskHead =>
  ({ id, seq, state: 'working', statusMessageId: null, metadata }) as unknown as TaskHead;

describe('RememberedTasks', () => {
  it('recalls a copy of what a commit left: changing it changes nothing remembered', () => {
    const tasks = new RememberedTasks(10);
    const left = row('a', 2);
    tasks.remember(left, 3);
    left.seq = 9; // the journal's row goes on changing after its commit's hook
    const recalled = tasks.recall('a')!;
    expect(recalled).toEqual({ row: expect.objectContaining({ id: 'a', seq: 2 }), messages: 3 });
    recalled.row.seq = 5;
    expect(tasks.recall('a')!.row.seq).toBe(2);
    const metadata = { labels: ['x'] };
    tasks.remember(row('m', 1, metadata), 1);
    metadata.labels.push('y'); // nor does the metadata it was given, or a recalled copy
    tasks.recall('m')!.row.metadata!.labels = [];
    expect(tasks.recall('m')!.row.metadata).toEqual({ labels: ['x'] });
    expect(tasks.recall('b')).toBeNull();
  });

  it('never replaces a later event by an earlier one (commit hooks may run out of order)', () => {
    const tasks = new RememberedTasks(10);
    tasks.remember(row('a', 4), null);
    tasks.remember(row('a', 3), 2);
    expect(tasks.recall('a')).toEqual({ row: expect.objectContaining({ seq: 4 }), messages: null });
    tasks.remember(row('a', 5), 2);
    expect(tasks.recall('a')).toEqual({ row: expect.objectContaining({ seq: 5 }), messages: 2 });
  });

  it('forgets the least recently committed beyond its capacity, and on request', () => {
    const tasks = new RememberedTasks(2);
    tasks.remember(row('a', 1), 1);
    tasks.remember(row('b', 1), 1);
    tasks.remember(row('a', 2), 1); // a is the most recent again
    tasks.remember(row('c', 1), 1);
    expect([tasks.recall('a'), tasks.recall('b'), tasks.recall('c')].map((t) => t?.row.id ?? null)).toEqual([
      'a',
      null,
      'c',
    ]);
    expect(tasks.size).toBe(2);
    tasks.forget('a');
    expect(tasks.recall('a')).toBeNull();
  });

  it('does not remember a task whose metadata is large (memory stays bounded whatever requesters send)', () => {
    const tasks = new RememberedTasks(10);
    const large = { blob: 'x'.repeat(MAX_REMEMBERED_METADATA_CHARS) };
    tasks.remember(row('a', 1, { small: true }), 1);
    expect(tasks.recall('a')!.row.metadata).toEqual({ small: true });
    tasks.remember(row('a', 2, large), 1); // what it knew of the task goes too
    tasks.remember(row('b', 1, large), 1);
    expect([tasks.recall('a'), tasks.recall('b'), tasks.size]).toEqual([null, null, 0]);
  });
});
