import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/tokens';
import { Metrics } from '../metrics/metrics';
import { DeliveryQueue, type ClaimedDelivery, type PushTarget, type WebhookTarget } from './delivery-queue';
import { DeliverySender, type OutboundRequest, type SendOutcome } from './delivery-sender';
import { PushNotifications } from './push-notifications';
import { signatureHeaders } from './signing';
import { SpanStatusCode } from '@opentelemetry/api';
import { ClaimLoop } from './claim-loop';
import { inDeliverySpan } from '../tracing/tracing';

/**
 * Sends due deliveries: claims up to `EVENTS_BATCH_SIZE` at a time, keeps that many
 * sends in flight (a slow endpoint holds one slot, not the queue), and records each
 * outcome. The slots are shared fairly (ClaimLoop, the forwarder's loop too): one
 * organization, webhook or push config holds at most EVENTS_MAX_SHARE_PERCENT of them,
 * a failing webhook a tenth, so a slow or dead endpoint cannot stall everyone else's
 * deliveries. It sleeps `EVENTS_POLL_INTERVAL_MS` when idle and wakes at once when a
 * transaction of this process that emitted an event commits.
 *
 * Runs inside the server (`EVENTS_DISPATCHER=inline`, the default) and in
 * `npm run worker`; any number of dispatchers may share a database. On shutdown it
 * stops claiming and waits for the sends in flight.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly loop: ClaimLoop<ClaimedDelivery>;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly sender: DeliverySender,
    private readonly push: PushNotifications,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {
    // One organization — and so any one webhook or push config — holds at most
    // EVENTS_MAX_SHARE_PERCENT of the slots, a failing webhook (its last attempt failed)
    // a tenth; each at least one.
    const { batchSize, maxSharePercent, pollIntervalMs } = config.events;
    const failingShare = Math.max(1, Math.floor(batchSize / 10));
    this.loop = new ClaimLoop<ClaimedDelivery>({
      what: 'deliveries',
      slots: batchSize,
      organizationShare: Math.max(1, Math.floor((batchSize * maxSharePercent) / 100)),
      pollIntervalMs,
      logger,
      claim: async (limit, held) => {
        const claimed = await this.queue.claim(limit, { ...held, failingShare });
        this.metrics.outboxLagSeen(lagOf(claimed));
        return claimed;
      },
      run: (delivery) => this.deliver(delivery),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.events.dispatcher === 'inline') {
      this.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.loop.settled();
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { target } = delivery;
    const attributes =
      target.kind === 'webhook'
        ? {
            'a2a.delivery.kind': 'webhook',
            'a2a.event.type': target.event.type,
            'a2a.delivery.attempt': delivery.attempt,
          }
        : { 'a2a.delivery.kind': 'push', 'a2a.delivery.attempt': delivery.attempt };
    // In the trace of the change that caused it: its `traceparent` goes with the request.
    await inDeliverySpan(
      target.kind === 'webhook' ? 'webhook delivery' : 'push notification delivery',
      delivery.traceparent,
      attributes,
      async (trace) => {
        let outcome: SendOutcome;
        try {
          outcome =
            target.kind === 'push' && target.ownerDeleted
              ? {
                  ok: false,
                  statusCode: null,
                  error: 'not sent: the requester who set this config has been deleted',
                  durationMs: 0,
                  final: true,
                }
              : await this.sender.send(withHeaders(await this.requestFor(target), trace));
        } catch (error) {
          outcome = {
            ok: false,
            statusCode: null,
            error: `not sent: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500),
            durationMs: 0,
          };
        }
        trace.span?.setAttribute('http.response.status_code', outcome.statusCode ?? 0);
        if (!outcome.ok) {
          trace.span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? undefined });
        }
        await this.record(delivery, outcome);
      },
    );
  }

  private async record(delivery: ClaimedDelivery, outcome: SendOutcome): Promise<void> {
    if (!outcome.ok) {
      this.logFailure(delivery, outcome);
    }
    try {
      const retries = await this.queue.complete(delivery, outcome);
      this.metrics.delivery(delivery.target.kind, outcome.ok ? 'succeeded' : retries ? 'retrying' : 'failed');
    } catch (error) {
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      this.logger.error({ err: error, delivery_id: delivery.id }, 'could not record a delivery attempt');
    }
  }

  /** The attempt's reason is the attempt log's: never a secret, never a resolved address. */
  private logFailure(delivery: ClaimedDelivery, outcome: SendOutcome): void {
    const { target } = delivery;
    const subject =
      target.kind === 'webhook'
        ? { webhook_id: target.webhookId, event_id: target.event.id }
        : { task_id: target.taskId, push_config_id: target.configId };
    this.logger.warn(
      {
        ...subject,
        delivery_id: delivery.id,
        attempt: delivery.attempt,
        status_code: outcome.statusCode,
        reason: outcome.error,
        final: outcome.final === true,
      },
      target.kind === 'webhook' ? 'webhook delivery failed' : 'push notification delivery failed',
    );
  }

  /**
   * A webhook: the envelope, signed (Standard Webhooks). A push notification: the
   * A2A payload of the config's version, with `Authorization: <scheme> <credentials>`
   * and the config's token, as the A2A specification has them.
   */
  private async requestFor(target: WebhookTarget | PushTarget): Promise<OutboundRequest> {
    if (target.kind === 'webhook') {
      const body = JSON.stringify(target.event);
      return { url: target.url, headers: { ...signatureHeaders(target.secrets, target.event.id, body) }, body };
    }
    const notification = await this.push.render(target.taskId, target.seq, target.version);
    const headers: Record<string, string> = { 'content-type': notification.contentType };
    if (target.authentication) {
      headers.authorization = `${target.authentication.scheme} ${target.authentication.credentials}`;
    }
    if (target.token) {
      headers['x-a2a-notification-token'] = target.token;
    }
    return { url: target.url, headers, body: notification.body };
  }
}

/** The request with the trace's headers (`traceparent`) added. */
function withHeaders(request: OutboundRequest, trace: { headers: Record<string, string> }): OutboundRequest {
  return Object.keys(trace.headers).length === 0
    ? request
    : { ...request, headers: { ...request.headers, ...trace.headers } };
}

/** Outbox lag as one claim sees it: the age of the oldest event among its first attempts (seconds; 0 when none). */
function lagOf(claimed: readonly ClaimedDelivery[]): number {
  const created = claimed.flatMap((d) =>
    d.attempt === 1 && d.target.kind === 'webhook' ? [Date.parse(d.target.event.created_at)] : [],
  );
  return created.length === 0 ? 0 : (Date.now() - Math.min(...created)) / 1000;
}
