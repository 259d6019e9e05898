import {
  isInterrupted,
  isSettled,
  isTerminal,
  REPLY_STATES,
  TASK_STATES,
  transition,
  type TaskAction,
  type TaskState,
} from './task-state';

/**
 * Every (state, action) pair, against the table in task-state.ts written out a
 * second time by hand: a change to either shows up here.
 */
const WORKER_LEGAL: Record<TaskState, string[]> = {
  submitted: ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'],
  working: ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'],
  'input-required': ['completed', 'failed', 'rejected'],
  'auth-required': ['working', 'input-required', 'completed', 'failed', 'rejected'],
  completed: [],
  failed: [],
  canceled: [],
  rejected: [],
};
const TERMINAL = ['completed', 'failed', 'canceled', 'rejected'];

describe('task state machine', () => {
  it('names the eight A2A states; four are terminal, two interrupted', () => {
    expect(TASK_STATES).toHaveLength(8);
    expect(TASK_STATES.filter(isTerminal)).toEqual(TERMINAL);
    expect(TASK_STATES.filter(isInterrupted)).toEqual(['input-required', 'auth-required']);
    expect(TASK_STATES.filter(isSettled)).toEqual(['input-required', 'auth-required', ...TERMINAL]);
  });

  const workerCases = TASK_STATES.flatMap((from) => REPLY_STATES.map((to) => [from, to] as const));
  it.each(workerCases)('worker reply %s → %s', (from, to) => {
    const result = transition(from, { by: 'worker', action: 'reply', to });
    if (TERMINAL.includes(from)) {
      expect(result).toEqual({ ok: false, reason: 'terminal' });
    } else if (WORKER_LEGAL[from].includes(to)) {
      expect(result).toEqual({ ok: true, state: to, changed: from !== to });
    } else {
      expect(result).toEqual({ ok: false, reason: 'illegal' });
    }
  });

  it('a worker can never set submitted or canceled (they are not reply states)', () => {
    expect(REPLY_STATES).not.toContain('submitted');
    expect(REPLY_STATES).not.toContain('canceled');
  });

  it.each(TASK_STATES)('worker reply without a state from %s keeps the state unless terminal', (from) => {
    const result = transition(from, { by: 'worker', action: 'reply', to: null });
    expect(result).toEqual(
      TERMINAL.includes(from) ? { ok: false, reason: 'terminal' } : { ok: true, state: from, changed: false },
    );
  });

  it.each([
    ['submitted', { ok: true, state: 'submitted', changed: false }],
    ['working', { ok: true, state: 'working', changed: false }],
    ['input-required', { ok: true, state: 'submitted', changed: true }],
    ['auth-required', { ok: true, state: 'submitted', changed: true }],
    ['completed', { ok: false, reason: 'terminal' }],
    ['failed', { ok: false, reason: 'terminal' }],
    ['canceled', { ok: false, reason: 'terminal' }],
    ['rejected', { ok: false, reason: 'terminal' }],
  ] as const)('requester message on %s', (from, expected) => {
    expect(transition(from, { by: 'requester', action: 'message' })).toEqual(expected);
  });

  it.each([
    ['submitted', { ok: true, state: 'canceled', changed: true }],
    ['working', { ok: true, state: 'canceled', changed: true }],
    ['input-required', { ok: true, state: 'canceled', changed: true }],
    ['auth-required', { ok: true, state: 'canceled', changed: true }],
    ['canceled', { ok: true, state: 'canceled', changed: false }],
    ['completed', { ok: false, reason: 'terminal' }],
    ['failed', { ok: false, reason: 'terminal' }],
    ['rejected', { ok: false, reason: 'terminal' }],
  ] as const)('requester cancel on %s', (from, expected) => {
    expect(transition(from, { by: 'requester', action: 'cancel' })).toEqual(expected);
  });

  it('no action ever leads out of a terminal state', () => {
    const actions: TaskAction[] = [
      { by: 'requester', action: 'message' },
      { by: 'requester', action: 'cancel' },
      { by: 'worker', action: 'reply', to: null },
      ...REPLY_STATES.map((to) => ({ by: 'worker' as const, action: 'reply' as const, to })),
    ];
    for (const from of TERMINAL as TaskState[]) {
      for (const action of actions) {
        const result = transition(from, action);
        expect(result.ok ? result.state : from).toBe(from);
      }
    }
  });
});
