import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { AdmissionService, type AdmissionDecision, type AdmittedCall } from '../admission/admission.service';
import type { AgentKeyPrincipal } from '../common/principal';
import { AppError, forbidden, notFound } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { isHandle } from '../identities/handle';
import { KeysService } from '../keys/keys.service';
import { AccessTokenVerifier } from '../auth/credential-verifiers';
import { TaskNotifier } from '../events/task-notifier';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import type { TaskPair } from '../ledger/task-records';
import { callContext, type ProtocolCall } from './call-context';
import { CallStanding, lostStanding } from './call-standing';
import { OpenCalls } from '../limits/open-calls';

/** What the binding read from the request before the method runs. */
export interface CallShape {
  version: A2AVersion;
  /** A send that waits for the worker (docs/api.md §5 "Blocking"). */
  blocking: boolean;
  /** A stream, or a blocking send: the call holds one of its key's open-call slots. */
  staysOpen: boolean;
}

/** What checks 1–3 admitted: the pair of identities, and what admission read to decide (AdmittedCall). */
export interface Admitted {
  pair: TaskPair;
  admitted: AdmittedCall;
}

/** An admitted call, from its checks to its end. */
export interface OpenCall {
  call: ProtocolCall;
  /** The ServerCallContext that carries `call` to LedgerRequestHandler. */
  context: ServerCallContext;
  /** Ends the call early: the client went away, its time is up. Nothing once it has ended. */
  abort(): void;
  /** Gives its slot back; once, however often it is called. */
  end(): void;
}

/**
 * docs/api.md §5's checks after the credential, in one place for every binding
 * (JSON-RPC, HTTP+JSON, gRPC): the caller's own receiver enabled (403), the worker
 * servable (404), admission (403); then the call's open-call slot (429) and its
 * standing, re-checked while it stays open. Bindings render the errors in their own
 * form; none of them decides anything itself.
 */
@Injectable()
export class ProtocolGate implements OnModuleDestroy {
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly admission: AdmissionService,
    private readonly keys: KeysService,
    private readonly tokens: AccessTokenVerifier,
    private readonly openCalls: OpenCalls,
    private readonly notifier: TaskNotifier,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Shutdown: streams end and blocking sends return the task as it is. */
  onModuleDestroy(): void {
    for (const call of this.inFlight) {
      call.abort();
    }
  }

  /**
   * Checks 1 (the caller's own receiver), 2 and 3: the pair of identities the call is
   * between, admitted to a call that names no skill of its own (a send, once it names
   * its skill, is admitted to that too: `admitSkill`).
   */
  async admit(principal: AgentKeyPrincipal, handle: string): Promise<Admitted> {
    if (!principal.identity.enabled) {
      throw forbidden(
        'requester_disabled',
        "Your identity's receiver is disabled; only enabled identities may send work.",
      );
    }
    // A segment that cannot be a handle names nobody, and never reaches the database.
    const call = isHandle(handle)
      ? await this.admission.admitCall(principal.identity.id, handle, principal.admissionVersion)
      : null;
    if (!call) {
      throw notFound('worker_not_found', 'No enabled, claimed identity has that handle.');
    }
    const { worker } = call;
    // The caller learns only that admission said no; the decision is recorded for each side's administrators.
    if (!call.decision.allowed) {
      throw admissionDenied();
    }
    const pair = {
      requester: {
        id: principal.identity.id,
        handle: principal.identity.handle,
        organizationId: principal.organizationId!,
      },
      worker: { id: worker.id, handle: worker.agentHandle, organizationId: worker.organizationId! },
    };
    return { pair, admitted: call };
  }

  /**
   * Check 3 again for a send, once it has read the skill its message names (docs/api.md
   * §16): decided from what `admit` read, with no read of its own; a denial is recorded
   * and refused in the binding's form, as `admit` refuses. The call's standing is asked
   * about that skill from then on.
   */
  async admitSkill(call: ProtocolCall, skill: string | null): Promise<AdmissionDecision> {
    call.skill = skill;
    const decision = await this.admission.admitSkill(call.admitted, skill);
    if (!decision.allowed) {
      throw call.standing.refuse(admissionDenied());
    }
    return decision;
  }

  /** An admitted call starts: its slot when it stays open (429 when none is free), its abort signal, its standing. */
  start(principal: AgentKeyPrincipal, { pair, admitted }: Admitted, shape: CallShape): OpenCall {
    const release = shape.staysOpen ? this.openCalls.take(principal.id) : () => undefined;
    if (!release) {
      throw new AppError(
        429,
        'too_many_open_calls',
        `This API key already has ${this.config.protocolMaxOpenCallsPerKey} streams and blocking sends open; wait for one to end.`,
      );
    }
    const abort = new AbortController();
    this.inFlight.add(abort);
    // As read by the checks that admitted it, from before its key was read (KeysService.verify).
    const standing = new CallStanding(
      () => this.standing(principal, call),
      () => this.notifier.standingChangedAt(),
      principal.checkedAt,
      principal.expiresAt?.getTime(),
    );
    const call: ProtocolCall = {
      pair,
      admitted,
      version: shape.version,
      blocking: shape.blocking,
      signal: abort.signal,
      standing,
    };
    let ended = false;
    return {
      call,
      context: callContext(call),
      // A call that has ended has nothing to abort (and an abort's DOMException is not free).
      abort: () => {
        if (!ended) {
          abort.abort();
        }
      },
      end: () => {
        ended = true;
        this.inFlight.delete(abort);
        release();
      },
    };
  }

  /**
   * The open call's checks, asked again: the key (the guard's), both identities and
   * admission for the call's skill (without recording a denial; the call was admitted).
   * Two indexed reads, side by side; the second is admission's own call lookup.
   */
  private async standing(principal: AgentKeyPrincipal, { pair, skill }: ProtocolCall): Promise<AppError | null> {
    const [lostKey, decision] = await Promise.all([
      // A trusted issuer's JWT stands while its trust does (docs/api.md §17); a key, while it is active.
      principal.federated ? this.tokens.lostStanding(principal) : this.keys.lostStanding(principal.id),
      this.admission.recheck(pair.requester.id, pair.worker.handle, skill),
    ]);
    // Identity rows are never deleted; were one missing, the call would have nobody to serve.
    return lostStanding(lostKey, decision ?? UNAVAILABLE);
  }
}

const admissionDenied = () => forbidden('admission_denied', 'This call is not admitted between these two identities.');

/** Standing of a call whose identity rows are gone. */
const UNAVAILABLE = { allowed: false, reason: 'worker_unavailable' } as const;
