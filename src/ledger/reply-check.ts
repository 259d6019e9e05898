import { requireAccess, type Resource } from '../auth/access';
import { AppError, conflict } from '../common/app-error';
import type { Principal } from '../common/principal';
import type { TaskHead } from './task-records';
import { transition, type ReplyState, type TaskState } from './task-state';

/** What a worker's reply may do to a task: the state it leaves the task in, or why it is refused. */
export type ReplyCheck = { ok: true; state: TaskState } | { ok: false; error: AppError };

/**
 * The preconditions of a worker's reply, in one place for both of its paths: the task
 * as read under its lock, and the task as this instance remembers it (which skips the
 * read when this allows the reply). The caller may reply to the task (a task it may not
 * see is "not found"; one it sees from the requester's side only is "forbidden"), and
 * the task may move to `to` (null: a reply without a new state): it is not finished,
 * and a worker may set that state from the task's current one.
 */
export function checkReply(
  principal: Principal,
  task: { row: TaskParties; state: TaskState } | null,
  to: ReplyState | null,
): ReplyCheck {
  try {
    requireAccess(principal, 'task.reply', task ? parties(task.row) : null);
  } catch (error) {
    if (error instanceof AppError) {
      return { ok: false, error };
    }
    throw error;
  }
  const next = transition(task!.state, { by: 'worker', action: 'reply', to });
  if (next.ok) {
    return { ok: true, state: next.state };
  }
  if (next.reason === 'terminal') {
    return { ok: false, error: conflict('task_terminal', `The task is ${task!.state}; it takes no more replies.`) };
  }
  return {
    ok: false,
    error: conflict('invalid_transition', `A worker cannot move a task from ${task!.state} to ${to}.`),
  };
}

/** What the access rules read of a task. */
export type TaskParties = Pick<TaskHead, 'requester' | 'worker' | 'held'>;

/** A task's participants as the access rules see them: a held task has no worker's side yet (docs/api.md §16). */
export function parties(task: TaskParties): Resource {
  return {
    requester: { organizationId: task.requester.organizationId, identityId: task.requester.id },
    worker: task.held ? null : { organizationId: task.worker.organizationId, identityId: task.worker.id },
  };
}
