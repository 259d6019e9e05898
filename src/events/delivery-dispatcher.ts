import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/tokens';
import { DeliveryQueue, type ClaimedDelivery, type PushTarget, type WebhookTarget } from './delivery-queue';
import { DeliverySender, type OutboundRequest, type SendOutcome } from './delivery-sender';
import { EventFeed } from './event-feed';
import { PushNotifications } from './push-notifications';
import { signatureHeaders } from './signing';

/**
 * Sends due deliveries: claims up to `EVENTS_BATCH_SIZE` at a time, keeps that many
 * sends in flight (a slow endpoint holds one slot, not the queue), and records each
 * outcome. It sleeps `EVENTS_POLL_INTERVAL_MS` when idle and wakes at once when a
 * transaction of this process that emitted an event commits.
 *
 * Runs inside the server (`EVENTS_DISPATCHER=inline`, the default) and in
 * `npm run worker`; any number of dispatchers may share a database. On shutdown it
 * stops claiming and waits for the sends in flight.
 */
const PRUNE_BATCH = 500;

@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private woken = false;
  private wakeUp: (() => void) | null = null;
  private pruning: NodeJS.Timeout | null = null;
  private pruned: Promise<void> = Promise.resolve();

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly feed: EventFeed,
    private readonly sender: DeliverySender,
    private readonly push: PushNotifications,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
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
    this.pruning = setInterval(() => (this.pruned = this.pruned.then(() => this.prune())), this.config.events.pruneIntervalMs);
    this.pruning.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.pruning) clearInterval(this.pruning);
    this.pruning = null;
    this.wake();
    await this.loop;
    await this.pruned;
    await Promise.all(this.inFlight);
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    const { batchSize } = this.config.events;
    while (this.running) {
      this.woken = false;
      const free = batchSize - this.inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (free > 0) {
        try {
          claimed = await this.queue.claim(free);
        } catch (error) {
          this.logger.error({ err: error }, 'could not claim deliveries');
        }
      }
      for (const delivery of claimed) {
        const send = this.deliver(delivery).finally(() => {
          this.inFlight.delete(send);
          this.wake();
        });
        this.inFlight.add(send);
      }
      // Claim again at once while the queue yields full batches and slots are free.
      if (claimed.length === free && free > 0) continue;
      if (!this.woken && this.running) await this.sleep();
    }
  }

  /**
   * Retention: expired events go in batches of PRUNE_BATCH, one short statement each,
   * so a large backlog never holds long locks; several dispatchers skip each other's rows.
   */
  private async prune(): Promise<void> {
    try {
      let total = 0;
      for (let gone = PRUNE_BATCH; gone === PRUNE_BATCH && this.running && total < PRUNE_BATCH * 100; total += gone) {
        gone = await this.feed.prune(this.config.events.retentionDays, PRUNE_BATCH);
      }
      if (total > 0) this.logger.info({ events: total, retention_days: this.config.events.retentionDays }, 'expired events deleted');
    } catch (error) {
      this.logger.error({ err: error }, 'could not delete expired events');
    }
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
    let outcome: SendOutcome;
    try {
      outcome = await this.sender.send(await this.requestFor(delivery.target));
    } catch (error) {
      outcome = { ok: false, statusCode: null, error: `not sent: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500), durationMs: 0 };
    }
    try {
      await this.queue.complete(delivery, outcome);
    } catch (error) {
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      this.logger.error({ err: error, delivery_id: delivery.id }, 'could not record a delivery attempt');
    }
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
    if (target.authentication) headers.authorization = `${target.authentication.scheme} ${target.authentication.credentials}`;
    if (target.token) headers['x-a2a-notification-token'] = target.token;
    return { url: target.url, headers, body: notification.body };
  }
}
