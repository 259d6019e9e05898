/**
 * The task state machine, as a pure function. docs/api.md §5 names the states and two
 * rules (a terminal task takes nothing more; the requester's message sends an
 * interrupted task back to `submitted`); the rest is decided here, in one place:
 *
 * | from             | requester message | requester cancel | worker reply may set                                   |
 * |------------------|-------------------|------------------|--------------------------------------------------------|
 * | submitted        | submitted         | canceled         | working, input-required, auth-required, completed, failed, rejected |
 * | working          | working           | canceled         | working, input-required, auth-required, completed, failed, rejected |
 * | input-required   | submitted         | canceled         | completed, failed, rejected                            |
 * | auth-required    | submitted         | canceled         | working, input-required, completed, failed, rejected   |
 * | canceled         | refused           | canceled (as is) | refused                                                |
 * | completed, failed, rejected | refused | refused         | refused                                                |
 *
 * - Only the requester submits (and re-submits) work and cancels it; a worker can
 *   never set `submitted` or `canceled`.
 * - `input-required` waits for the requester: the worker cannot answer its own
 *   question (no `working`), only give up or finish (completed, failed, rejected).
 * - `auth-required` is resolved out of band, so the worker may resume (`working`) or
 *   ask for input instead.
 * - A reply without a state (a message or artifacts only) keeps a non-terminal state.
 */
export const TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** The states a worker's reply may set (docs/api.md §7). */
export const REPLY_STATES = ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'] as const;
export type ReplyState = (typeof REPLY_STATES)[number];

const TERMINAL: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected']);
const INTERRUPTED: ReadonlySet<TaskState> = new Set(['input-required', 'auth-required']);

export const isTerminal = (state: TaskState): boolean => TERMINAL.has(state);
export const isInterrupted = (state: TaskState): boolean => INTERRUPTED.has(state);
/** Terminal or interrupted: the worker has nothing more to say until someone else acts. */
export const isSettled = (state: TaskState): boolean => TERMINAL.has(state) || INTERRUPTED.has(state);

type OpenState = 'submitted' | 'working' | 'input-required' | 'auth-required';

const WORKER_MAY_SET: Record<OpenState, readonly ReplyState[]> = {
  submitted: ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'],
  working: ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'],
  'input-required': ['completed', 'failed', 'rejected'],
  'auth-required': ['working', 'input-required', 'completed', 'failed', 'rejected'],
};

export type TaskAction =
  | { by: 'requester'; action: 'message' }
  | { by: 'requester'; action: 'cancel' }
  /** `to: null` — a reply that carries a message or artifacts but no new state. */
  | { by: 'worker'; action: 'reply'; to: ReplyState | null };

export type Transition =
  { ok: true; state: TaskState; changed: boolean } | { ok: false; reason: 'terminal' | 'illegal' };

const stay = (state: TaskState): Transition => ({ ok: true, state, changed: false });
const move = (from: TaskState, to: TaskState): Transition => ({ ok: true, state: to, changed: from !== to });

export function transition(from: TaskState, action: TaskAction): Transition {
  if (action.by === 'requester' && action.action === 'cancel') {
    if (from === 'canceled') {
      return stay(from);
    }
    return isTerminal(from) ? { ok: false, reason: 'terminal' } : move(from, 'canceled');
  }
  if (isTerminal(from)) {
    return { ok: false, reason: 'terminal' };
  }
  const open = from as OpenState;
  if (action.by === 'requester') {
    return isInterrupted(open) ? move(open, 'submitted') : stay(open);
  }
  if (action.to === null) {
    return stay(open);
  }
  return WORKER_MAY_SET[open].includes(action.to) ? move(open, action.to) : { ok: false, reason: 'illegal' };
}
