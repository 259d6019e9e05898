import type { AdmissionDecision } from '../admission/admission.service';
import { forbidden, notFound, type AppError } from '../common/app-error';

/**
 * A call that stays open — a stream, a blocking send — was checked once when it
 * started (docs/api.md §5, checks 1–3), but may last minutes. Before it delivers anything
 * after that, it asks again (unless vouched for, below): is the caller's key still
 * active, are both identities still claimed, enabled and not deleted, does admission
 * still allow the pair? The first "no" ends the call with the error the same check
 * gives a new call.
 */
export function lostStanding(
  lostKey: AppError | null,
  decision: Pick<AdmissionDecision, 'allowed' | 'reason'>,
): AppError | null {
  if (lostKey) {
    return lostKey;
  }
  if (decision.allowed) {
    return null;
  }
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

/**
 * One open call's re-checks, and the refusal that ended it, if one did.
 *
 * A re-check is two reads; most wake-ups need neither. Every change that can cost a
 * call its standing is announced on the database's channel when it commits (triggers:
 * the StandingChanges migration), and PostgreSQL delivers a session's notifications
 * in commit order. So when the task change that woke a call was announced there, every
 * standing change committed before it has been counted (TaskNotifier.standingChangedAt);
 * if none was counted since the call's standing was last read — each read issued
 * after the time it notes — the answer is the one that read gave, and the events up to
 * the announced one go out without asking (`vouchedThrough`). Anything else asks: a
 * wake-up that did not come by the channel (this instance's own commit, while the
 * listener is down or its notification late: PgTaskNotifier.committed), an event
 * past the announced one, the embedded database, a listener that is down or came back.
 *
 * A key's expiry is not announced (time passes without a commit): a call is vouched
 * for only before its key's `expiresAt` as authentication read it; a change of that
 * time is announced like a change of the key's status.
 *
 * It rests on what the service keeps true: no transaction both changes someone's
 * standing and a task (within one commit, notifications go in the order sent, and a
 * socket read could end between them); no standing change is made with the triggers
 * disabled; and nobody but the service notifies on the channel (a forged `task:seq`
 * could vouch for events nobody announced — which takes a database role).
 */
export class CallStanding {
  private lost: AppError | null = null;

  constructor(
    private readonly check: () => Promise<AppError | null>,
    /** TaskNotifier.standingChangedAt. */
    private readonly changedAt: () => number = () => Number.POSITIVE_INFINITY,
    /** When its standing was last read (`performance.now()` before the reads went out): the credential check's at first. */
    private checkedAt = Number.NEGATIVE_INFINITY,
    /** When the caller's key expires (`Date.now()` time); past it, nothing is vouched for. */
    private readonly expiresAt = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * The latest event the call may deliver without asking again: `announced` (the
   * latest change the channel announced, TaskWatch.announcedThrough) when no standing
   * change has been counted since the call's standing was last read; otherwise none.
   */
  vouchedThrough(announced: number): number {
    return this.changedAt() < this.checkedAt && Date.now() < this.expiresAt ? announced : Number.NEGATIVE_INFINITY;
  }

  /** Asks again; throws CallRefused when the call may no longer deliver anything. */
  async require(): Promise<void> {
    const asked = performance.now();
    this.lost = await this.check();
    if (this.lost) {
      throw new CallRefused(this.lost);
    }
    this.checkedAt = Math.max(this.checkedAt, asked);
  }

  /**
   * The call is refused now, as a lost standing ends it (a send whose skill admission
   * denies, docs/api.md §16): every binding answers with `refusal`. To be thrown.
   */
  refuse(refusal: AppError): CallRefused {
    this.lost = refusal;
    return new CallRefused(refusal);
  }

  get refusal(): AppError | null {
    return this.lost;
  }
}
