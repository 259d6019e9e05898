import type { AgentKeyPrincipal, Principal } from '../common/principal';
import { checkReply, type TaskParties } from './reply-check';
import type { ReplyState, TaskState } from './task-state';

const ACME = 'org-acme';
const OTHER = 'org-other';
const agent = (id: string, organizationId: string): AgentKeyPrincipal => ({
  kind: 'agent',
  id: 'key',
  organizationId,
  identity: { id, handle: id, claimed: true, enabled: true },
});
const row: TaskParties = {
  requester: { id: 'requester', handle: 'requester', organizationId: OTHER },
  worker: { id: 'worker', handle: 'worker', organizationId: ACME },
  held: false,
};
const worker = agent('worker', ACME);

/** The outcome as the state the task moves to, or `status code`. */
function outcome(principal: Principal, state: TaskState | null, to: ReplyState | null, held = false): string {
  const check = checkReply(principal, state === null ? null : { row: { ...row, held }, state }, to);
  return check.ok ? check.state : `${check.error.status} ${check.error.code}`;
}

describe('checkReply: the preconditions of a worker reply', () => {
  it.each<[string, Principal, TaskState | null, ReplyState | null, string]>([
    ['the worker moves a working task on', worker, 'working', 'completed', 'completed'],
    ['a reply without a state keeps it', worker, 'input-required', null, 'input-required'],
    [
      'the worker’s organization replies for it',
      { kind: 'admin', id: 'k', organizationId: ACME },
      'working',
      null,
      'working',
    ],
    ['a finished task takes no reply', worker, 'completed', 'working', '409 task_terminal'],
    ['nor one without a state', worker, 'canceled', null, '409 task_terminal'],
    ['a state the worker may not set from here', worker, 'input-required', 'working', '409 invalid_transition'],
    ['a task that is not there is not found', worker, null, null, '404 task_not_found'],
    ['the requester may not reply', agent('requester', OTHER), 'working', null, '403 not_task_worker'],
    ['a stranger does not see the task', agent('stranger', 'org-third'), 'working', null, '404 task_not_found'],
  ])('%s', (_, principal, state, to, expected) => {
    expect(outcome(principal, state, to)).toBe(expected);
  });

  it('a held task (waiting for approval) is not found by its worker; its requester still may not reply', () => {
    expect(outcome(worker, 'auth-required', 'working', true)).toBe('404 task_not_found');
    expect(outcome({ kind: 'admin', id: 'k', organizationId: ACME }, 'auth-required', null, true)).toBe(
      '404 task_not_found',
    );
    expect(outcome(agent('requester', OTHER), 'auth-required', null, true)).toBe('403 not_task_worker');
  });

  it('access is checked before the state: a stranger learns nothing of a finished task', () => {
    expect(outcome(agent('stranger', 'org-third'), 'completed', 'working')).toBe('404 task_not_found');
  });
});
