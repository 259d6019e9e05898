import type { AdmissionDecision } from '../admission/admission.service';
import { forbidden, notFound, unauthorized, type AppError } from '../common/app-error';

/**
 * A call that stays open — a stream, a blocking send — was checked once when it
 * started (CONTRACT §5, checks 1–3), but may last minutes. Each time it wakes, before
 * it delivers anything, it asks again: is the caller's key still active, are both
 * identities still claimed, enabled and not deleted, does admission still allow the
 * pair? The first "no" ends the call with the error the same check gives a new call.
 */
export function lostStanding(
  keyActive: boolean,
  decision: Pick<AdmissionDecision, 'allowed' | 'reason'>,
): AppError | null {
  if (!keyActive) return unauthorized('invalid_api_key', 'The API key was revoked while this call was open.');
  if (decision.allowed) return null;
  switch (decision.reason) {
    case 'requester_unclaimed':
    case 'requester_disabled':
      return forbidden('requester_disabled', "Your identity's receiver was disabled while this call was open.");
    case 'worker_unavailable':
      return notFound(
        'worker_not_found',
        'The worker stopped being an enabled, claimed identity while this call was open.',
      );
    default:
      // As at the start of a call, the caller learns only that admission said no.
      return forbidden('admission_denied', 'This call is no longer admitted between these two identities.');
  }
}

/** Ends an open call: carries the error the call answers with. */
export class CallRefused extends Error {
  constructor(readonly refusal: AppError) {
    super(refusal.detail);
  }
}

/** One open call's re-checks, and the refusal that ended it, if one did. */
export class CallStanding {
  private lost: AppError | null = null;

  constructor(private readonly check: () => Promise<AppError | null>) {}

  /** Throws CallRefused when the call may no longer deliver anything. */
  async require(): Promise<void> {
    this.lost = await this.check();
    if (this.lost) throw new CallRefused(this.lost);
  }

  get refusal(): AppError | null {
    return this.lost;
  }
}
