import { reportedReason, type AdmissionReason, type Side } from './admission.decision';

/** What one organization's administrators are told of a decision (docs/api.md §6). */
describe('reported reason', () => {
  const organizations = { requester: 'acme', worker: 'globex' };

  it.each<[AdmissionReason, Side | null, string, string]>([
    ['blocked_by_worker', 'worker', 'globex', 'blocked_by_worker'],
    ['blocked_by_worker', 'worker', 'acme', 'denied_by_peer'],
    ['not_permitted_by_requester', 'requester', 'acme', 'not_permitted_by_requester'],
    ['not_permitted_by_requester', 'requester', 'globex', 'denied_by_peer'],
    ['worker_unavailable', 'worker', 'acme', 'denied_by_peer'],
    ['mutual_permit', null, 'acme', 'mutual_permit'],
    ['public_egress', null, 'globex', 'public_egress'],
  ])('%s decided by %s, seen by %s → %s', (reason, decidedBy, viewer, expected) => {
    expect(reportedReason({ reason, decidedBy }, organizations, viewer)).toBe(expected);
  });

  it('an unclaimed participant belongs to no organization: its state is reported as it is', () => {
    expect(
      reportedReason(
        { reason: 'requester_unclaimed', decidedBy: 'requester' },
        { requester: null, worker: 'globex' },
        'globex',
      ),
    ).toBe('requester_unclaimed');
    expect(
      reportedReason(
        { reason: 'worker_unavailable', decidedBy: 'worker' },
        { requester: 'acme', worker: null },
        'acme',
      ),
    ).toBe('worker_unavailable');
  });

  it('within one organization nothing is hidden', () => {
    expect(
      reportedReason(
        { reason: 'blocked_by_requester', decidedBy: 'requester' },
        { requester: 'acme', worker: 'acme' },
        'acme',
      ),
    ).toBe('blocked_by_requester');
  });
});
