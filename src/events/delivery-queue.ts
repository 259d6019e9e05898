import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/tokens';
import { Database, type Tx } from '../database/database';
import type { SendOutcome } from './delivery-sender';
import type { HeldShares } from './claim-loop';
import type { EventType } from './event-types';
import { DeliveriesRepository, type ClaimedDeliveryRecord } from './deliveries.repository';
import type { PushVersion } from './push-notifications';
import { WebhooksRepository } from './webhooks.repository';
import { DISABLE_AFTER_MS, retryDelay } from './retry-schedule';

/** The event envelope (docs/api.md §8, §14), its members in their order. */
export interface Envelope {
  id: string;
  type: EventType;
  created_at: string;
  organization_id: string;
  data: Record<string, unknown>;
}

/**
 * An event's envelope, its members in their order: the one place it is made, so the feed,
 * the webhook body and a delivery's `request_body` (webhook.view.ts) are the same bytes.
 */
export function envelopeOf(event: {
  id: string;
  type: EventType;
  createdAt: Date;
  organizationId: string;
  data: Record<string, unknown>;
}): Envelope {
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    organization_id: event.organizationId,
    data: event.data,
  };
}

export interface WebhookTarget {
  kind: 'webhook';
  webhookId: string;
  url: string;
  /** Every secret valid now, newest first. */
  secrets: string[];
  event: Envelope;
}

/** An A2A push notification config and the task event to report to it. */
export interface PushTarget {
  kind: 'push';
  taskId: string;
  configId: string;
  seq: number;
  url: string;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  version: PushVersion;
  /** The requester who set the config has been deleted: nothing more is sent to it. */
  ownerDeleted: boolean;
}

/** A delivery a dispatcher has claimed: what to send, and where. */
export interface ClaimedDelivery {
  id: string;
  /** This attempt's number; only the dispatcher that claimed it sends it. */
  attempt: number;
  target: WebhookTarget | PushTarget;
  /** The keys of its fair share: its destination (webhook or push config) and organization. */
  destination: string;
  organization: string;
  /** How many slots its destination may hold (less while a webhook is failing). */
  destinationShare: number;
  /** The W3C `traceparent` of the change that caused it (sent with it); null without tracing. */
  traceparent: string | null;
}

/** What a dispatcher holds in flight, and the shares (ClaimLoop's), with `failingShare` per failing webhook. */
export interface FairShares extends HeldShares {
  failingShare: number;
}

const INTERRUPTED = 'interrupted: the dispatcher stopped before the result was recorded';

@Injectable()
export class DeliveryQueue {
  constructor(
    private readonly db: Database,
    private readonly repository: DeliveriesRepository,
    private readonly webhooks: WebhooksRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** A lease outlives any send (bounded by the timeout), so only a stopped dispatcher's claims expire. */
  private get leaseMs(): number {
    return 2 * this.config.events.timeoutMs + 5_000;
  }

  async claim(limit: number, shares: FairShares): Promise<ClaimedDelivery[]> {
    // One statement, its own transaction. The log of an interrupted attempt follows it;
    // should this process stop in between, only that log line is missing.
    const claimed = await this.repository.claimDeliveries({
      limit,
      leaseMs: this.leaseMs,
      held: shares,
      organizationShare: shares.organizationShare,
      failingShare: shares.failingShare,
    });
    for (const delivery of claimed.filter((c) => c.interrupted)) {
      await this.repository.logAttempt(
        {
          deliveryId: delivery.id,
          attempt: delivery.attempt - 1,
          succeeded: false,
          statusCode: null,
          error: INTERRUPTED,
          durationMs: 0,
        },
        false,
      );
    }
    return claimed.map((delivery) => ({
      id: delivery.id,
      attempt: delivery.attempt,
      target: targetOf(delivery),
      destination: delivery.destination,
      organization: delivery.fairOrganization,
      destinationShare: delivery.share,
      traceparent: delivery.traceparent,
    }));
  }

  /**
   * Records an attempt's outcome. Success finishes the delivery and ends the
   * endpoint's failing run. Failure schedules the next attempt (or fails the
   * delivery when the schedule is spent), starts or extends the failing run, and
   * disables the webhook once that run has lasted DISABLE_AFTER_MS. The delivery
   * is only updated while this claim still holds it. Returns whether another attempt
   * is scheduled (false after a success or a final failure).
   */
  async complete(delivery: ClaimedDelivery, outcome: SendOutcome): Promise<boolean> {
    const webhookId = delivery.target.kind === 'webhook' ? delivery.target.webhookId : null;
    if (outcome.ok) {
      await this.repository.recordSuccess(
        {
          id: delivery.id,
          attempt: delivery.attempt,
          statusCode: outcome.statusCode,
          durationMs: outcome.durationMs,
          responseHeaders: outcome.response?.headers ?? null,
          responseBody: outcome.response?.body ?? null,
        },
        webhookId,
      );
      return false;
    }
    return this.db.transaction(async (tx) => {
      await this.repository.logAttempt(
        {
          deliveryId: delivery.id,
          attempt: delivery.attempt,
          succeeded: false,
          statusCode: outcome.statusCode,
          error: outcome.error,
          durationMs: outcome.durationMs,
          responseHeaders: outcome.response?.headers ?? null,
          responseBody: outcome.response?.body ?? null,
        },
        true,
        tx,
      );
      // A policy refusal is final: the same destination would be refused at every retry.
      const delay = outcome.final ? null : retryDelay(this.config.events.retryScheduleMs, delivery.attempt);
      if (webhookId === null) {
        // A push notification config has no failing run: it lives as long as its task.
        await this.finish(tx, delivery, outcome, delay !== null ? 'pending' : 'failed', delay);
        return delay !== null;
      }
      const webhook = await this.webhooks.lockWebhookFailing(webhookId, DISABLE_AFTER_MS, tx);
      const disable = webhook?.status === 'active' && webhook.expired === true;
      await this.webhooks.markWebhookFailing(webhookId, tx);
      const retry = webhook?.status === 'active' && !disable && delay !== null;
      await this.finish(tx, delivery, outcome, retry ? 'pending' : 'failed', retry ? delay : null);
      if (disable) {
        await this.webhooks.disableWebhook(webhookId, tx);
        const failed = await this.failPending(tx, webhookId);
        this.logger.warn(
          { webhook_id: webhookId, failed_deliveries: failed },
          'webhook disabled: its endpoint has been failing for 5 days',
        );
      }
      return retry;
    });
  }

  /**
   * A disabled webhook sends nothing more: its waiting deliveries fail (each can be
   * retried once the webhook is enabled again). Returns how many.
   */
  async failPending(tx: Tx, webhookId: string): Promise<number> {
    return this.repository.failPendingDeliveries(webhookId, tx);
  }

  /** `delayMs` is the wait before the next attempt of a pending delivery, null for a finished one. */
  private async finish(
    tx: Tx,
    delivery: ClaimedDelivery,
    outcome: SendOutcome,
    status: 'pending' | 'succeeded' | 'failed',
    delayMs: number | null,
  ): Promise<void> {
    await this.repository.finishDelivery(
      {
        id: delivery.id,
        attempt: delivery.attempt,
        status,
        delayMs,
        statusCode: outcome.statusCode,
        error: outcome.error,
        durationMs: outcome.durationMs,
      },
      tx,
    );
  }
}

function targetOf(claimed: ClaimedDeliveryRecord): WebhookTarget | PushTarget {
  if (claimed.webhookId !== null) {
    return {
      kind: 'webhook',
      webhookId: claimed.webhookId,
      url: claimed.webhookUrl!,
      secrets: claimed.previousSecret ? [claimed.secret!, claimed.previousSecret] : [claimed.secret!],
      event: envelopeOf({
        id: claimed.eventId!,
        type: claimed.eventType!,
        createdAt: claimed.eventCreatedAt!,
        organizationId: claimed.organizationId!,
        data: claimed.data!,
      }),
    };
  }
  return {
    kind: 'push',
    taskId: claimed.pushTaskId!,
    configId: claimed.pushConfigId!,
    seq: claimed.pushSeq!,
    url: claimed.pushUrl!,
    token: claimed.token,
    authentication: claimed.authentication,
    version: claimed.protocolVersion!,
    ownerDeleted: claimed.ownerDeleted === true,
  };
}
