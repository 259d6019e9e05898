import type { TaskHead } from './task-records';

/** A task as this instance last committed it; see RememberedTasks. */
export interface RememberedTask {
  /** Its row, a copy of the caller's own. */
  row: TaskHead;
  /** How many messages it holds, when that is known exactly; null otherwise. */
  messages: number | null;
}

/**
 * A task's metadata (the requester's) of more JSON than this is not worth its memory:
 * such a task is not remembered. Kept as its JSON text, so a task costs 1–2 KB more at
 * most (two bytes a character beyond Latin-1) whatever requesters send.
 */
export const MAX_REMEMBERED_METADATA_CHARS = 1024;

/**
 * The tasks this instance committed changes to most recently, as it left them: a writer
 * may change one of them without reading its row first (LedgerService.lockRemembered).
 * Never trusted: the lock that writer sends with its writes checks that the task is
 * still at the event remembered, and fails the transaction otherwise. Bounded in count
 * (the least recently committed are forgotten first) and in size (large metadata). Per instance: another instance's
 * commit makes what this one remembers stale, which the check catches.
 */
export class RememberedTasks {
  /** By task id, the row without its metadata, and the metadata as JSON (a string is its own size, and shared with no one). */
  private readonly tasks = new Map<string, { row: TaskHead; metadata: string | null; messages: number | null }>();

  constructor(private readonly capacity: number) {}

  /**
   * The task as a commit left it. A commit's hooks may run after a later commit's:
   * an older event never replaces a newer one.
   */
  remember(row: TaskHead, messages: number | null): void {
    const known = this.tasks.get(row.id);
    if (known && known.row.seq >= row.seq) {
      return;
    }
    const metadata = row.metadata === null ? null : JSON.stringify(row.metadata);
    this.tasks.delete(row.id); // re-inserted last: the Map's order is the order of commits
    if (metadata !== null && metadata.length > MAX_REMEMBERED_METADATA_CHARS) {
      return;
    }
    this.tasks.set(row.id, { row: { ...row, metadata: null }, metadata, messages });
    if (this.tasks.size > this.capacity) {
      this.tasks.delete(this.tasks.keys().next().value!);
    }
  }

  /** A copy of what is remembered of the task (the caller may change it), or null. */
  recall(taskId: string): RememberedTask | null {
    const known = this.tasks.get(taskId);
    if (!known) {
      return null;
    }
    const metadata = known.metadata === null ? null : (JSON.parse(known.metadata) as TaskHead['metadata']);
    return { row: { ...known.row, metadata }, messages: known.messages };
  }

  forget(taskId: string): void {
    this.tasks.delete(taskId);
  }

  get size(): number {
    return this.tasks.size;
  }
}
