import type { AdmissionReason } from '../admission/admission.service';
import { lostKey } from '../keys/key-standing';
import { CallRefused, CallStanding, lostStanding } from './call-standing';

describe("an open call's standing", () => {
  const allowed = { allowed: true, reason: 'same_organization' as const };
  const denied = (reason: AdmissionReason) => ({ allowed: false, reason });

  it('stands while the key is active and admission allows the pair', () => {
    for (const reason of ['same_organization', 'public_egress', 'mutual_permit'] as const) {
      expect(lostStanding(null, { allowed: true, reason })).toBeNull();
    }
  });

  it('a revoked or expired key comes first, whatever admission says: 401 with its own code', () => {
    for (const decision of [
      allowed,
      denied('requester_disabled'),
      denied('worker_unavailable'),
      denied('blocked_by_worker'),
    ]) {
      expect(lostStanding(lostKey('revoked'), decision)).toMatchObject({ status: 401, code: 'invalid_api_key' });
      expect(lostStanding(lostKey('expired'), decision)).toMatchObject({ status: 401, code: 'api_key_expired' });
    }
  });

  it.each<[AdmissionReason, number, string]>([
    ['requester_unclaimed', 403, 'requester_disabled'],
    ['requester_disabled', 403, 'requester_disabled'],
    ['worker_unavailable', 404, 'worker_not_found'],
    ['blocked_by_requester', 403, 'admission_denied'],
    ['blocked_by_worker', 403, 'admission_denied'],
    ['not_permitted_by_requester', 403, 'admission_denied'],
    ['not_permitted_by_worker', 403, 'admission_denied'],
  ])('a denial for %s is %i %s, as the same check at the start of a call', (reason, status, code) => {
    expect(lostStanding(null, denied(reason))).toMatchObject({ status, code });
  });

  it('CallStanding throws the refusal and keeps it', async () => {
    const refusal = lostStanding(lostKey('revoked'), allowed)!;
    let answer: typeof refusal | null = null;
    const standing = new CallStanding(async () => answer);
    await standing.require();
    expect(standing.refusal).toBeNull();
    answer = refusal;
    await expect(standing.require()).rejects.toEqual(new CallRefused(refusal));
    await expect(standing.require()).rejects.toBeInstanceOf(CallRefused);
    expect(standing.refusal).toBe(refusal);
  });

  describe('vouchedThrough: the events a wake-up may deliver without asking again', () => {
    const ok = async () => null;

    it('up to the announced change while nothing was counted since the standing was read', () => {
      const standing = new CallStanding(ok, () => 10, 20);
      expect(standing.vouchedThrough(7)).toBe(7);
      // Nothing announced on the channel: nothing vouched.
      expect(standing.vouchedThrough(Number.NEGATIVE_INFINITY)).toBe(Number.NEGATIVE_INFINITY);
    });

    it('nothing once a change was counted at or after the read, or when changes cannot be counted', () => {
      expect(new CallStanding(ok, () => 20, 20).vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
      expect(new CallStanding(ok, () => 30, 20).vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
      expect(new CallStanding(ok, () => Number.POSITIVE_INFINITY, 20).vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
      // Without the time its key was read, a call asks on every wake-up.
      expect(new CallStanding(ok, () => 10).vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
    });

    it("nothing once the key's expiry has passed: time passing is announced to nobody", () => {
      expect(new CallStanding(ok, () => 10, 20, Date.now() + 60_000).vouchedThrough(7)).toBe(7);
      expect(new CallStanding(ok, () => 10, 20, Date.now() - 1).vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
    });

    it('a read that passed vouches again from when it was asked; one that failed does not', async () => {
      let changed = 30;
      let answer: ReturnType<typeof lostStanding> = null;
      const standing = new CallStanding(
        async () => answer,
        () => changed,
        20,
      );
      expect(standing.vouchedThrough(7)).toBe(Number.NEGATIVE_INFINITY);
      await standing.require();
      expect(standing.vouchedThrough(7)).toBe(7);
      changed = performance.now();
      expect(standing.vouchedThrough(8)).toBe(Number.NEGATIVE_INFINITY);
      answer = lostStanding(lostKey('revoked'), allowed);
      await expect(standing.require()).rejects.toBeInstanceOf(CallRefused);
      expect(standing.vouchedThrough(8)).toBe(Number.NEGATIVE_INFINITY);
    });
  });
});
