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
import { inDeliverySpan } from '../tracing/tracing';

/**
 * Sends due deliveries: claims up to `EVENTS_BATCH_SIZE` at a time, keeps that many
 * sends in flight (a slow endpoint holds one slot, not the queue), and records each
 * outcome. The slots are shared fairly: one organization, webhook or push config
 * holds at most EVENTS_MAX_SHARE_PERCENT of them, a failing webhook a tenth, so a
 * slow or dead endpoint cannot stall everyone else's deliveries. It sleeps `EVENTS_POLL_INTERVAL_MS` when idle and wakes at once when a
 * transaction of this process that emitted an event commits.
 *
 * Runs inside the server (`EVENTS_DISPATCHER=inline`, the default) and in
 * `npm run worker`; any number of dispatchers may share a database. On shutdown it
 * stops claiming and waits for the sends in flight.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  /** What is in flight per destination and organization (the fair shares of DeliveryQueue.claim). */
  private readonly heldByDestination = new Map<string, number>();
  private readonly shareOfDestination = new Map<string, number>();
  private readonly heldByOrganization = new Map<string, number>();
  private woken = false;
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly sender: DeliverySender,
    private readonly push: PushNotifications,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.events.dispatcher === 'inline') this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * The fair shares of the slots: one organization — and so any one webhook or push
   * config — holds at most EVENTS_MAX_SHARE_PERCENT of them, a failing webhook (its
   * last attempt failed) a tenth; each at least one.
   */
  private get shares() {
    const { batchSize, maxSharePercent } = this.config.events;
    return {
      organizationShare: Math.max(1, Math.floor((batchSize * maxSharePercent) / 100)),
      failingShare: Math.max(1, Math.floor(batchSize / 10)),
    };
  }

  private async run(): Promise<void> {
    const { batchSize } = this.config.events;
    while (this.running) {
      this.woken = false;
      const free = batchSize - this.inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (free > 0) {
        try {
          claimed = await this.queue.claim(free, {
            heldByDestination: this.heldByDestination,
            shareOfDestination: this.shareOfDestination,
            heldByOrganization: this.heldByOrganization,
            ...this.shares,
          });
          this.metrics.outboxLagSeen(lagOf(claimed));
        } catch (error) {
          this.logger.error({ err: error }, 'could not claim deliveries');
        }
      }
      let reachedShare = false;
      for (const delivery of claimed) {
        reachedShare = this.hold(delivery) || reachedShare;
        const send = this.deliver(delivery).finally(() => {
          this.release(delivery);
          this.inFlight.delete(send);
          this.wake();
        });
        this.inFlight.add(send);
      }
      // Claim again at once while the queue yields full batches and slots are free, or
      // when a destination or organization reached its share: the next claim skips
      // its backlog, which may have hidden other work from this one.
      if (free > 0 && (claimed.length === free || (reachedShare && claimed.length < free))) continue;
      if (!this.woken && this.running) await this.sleep();
    }
  }

  /** Counts a claimed delivery against its shares; true when one of them is now full. */
  private hold(delivery: ClaimedDelivery): boolean {
    const atDestination = (this.heldByDestination.get(delivery.destination) ?? 0) + 1;
    const atOrganization = (this.heldByOrganization.get(delivery.organization) ?? 0) + 1;
    this.heldByDestination.set(delivery.destination, atDestination);
    this.shareOfDestination.set(delivery.destination, delivery.destinationShare);
    this.heldByOrganization.set(delivery.organization, atOrganization);
    return atDestination >= delivery.destinationShare || atOrganization >= this.shares.organizationShare;
  }

  private release(delivery: ClaimedDelivery): void {
    const atDestination = (this.heldByDestination.get(delivery.destination) ?? 1) - 1;
    if (atDestination > 0) this.heldByDestination.set(delivery.destination, atDestination);
    else {
      this.heldByDestination.delete(delivery.destination);
      this.shareOfDestination.delete(delivery.destination);
    }
    const atOrganization = (this.heldByOrganization.get(delivery.organization) ?? 1) - 1;
    if (atOrganization > 0) this.heldByOrganization.set(delivery.organization, atOrganization);
    else this.heldByOrganization.delete(delivery.organization);
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, this.config.events.pollIntervalMs);
      this.wakeUp = done;
    });
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
        if (!outcome.ok) trace.span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? undefined });
        await this.record(delivery, outcome);
      },
    );
  }

  private async record(delivery: ClaimedDelivery, outcome: SendOutcome): Promise<void> {
    if (!outcome.ok) this.logFailure(delivery, outcome);
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
    if (target.authentication)
      headers.authorization = `${target.authentication.scheme} ${target.authentication.credentials}`;
    if (target.token) headers['x-a2a-notification-token'] = target.token;
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
