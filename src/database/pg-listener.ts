import { Client } from 'pg';
import type { Logger } from 'pino';

const MAX_BACKOFF_MS = 5_000;

export interface PgListenerHandlers {
  /** A notification's payload on the channel. */
  notification(payload: string): void;
  /** The connection came back after a loss: notifications sent in between are lost. */
  reconnected(): void;
}

/**
 * PostgreSQL LISTEN on one channel, over one dedicated connection (not TypeORM's
 * pool, whose connections come and go). Connection-level plumbing: when the
 * connection drops it reconnects with backoff and says so, since notifications sent
 * in between are lost. The notifications themselves are sent by the statements of
 * the repositories (`pg_notify`), delivered when their transaction commits.
 */
export class PgListener {
  private client: Client | null = null;
  private stopped = false;
  private backoffMs = 100;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly handlers: PgListenerHandlers,
  ) {}

  start(): Promise<void> {
    return this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** The LISTEN connection is up (between a loss and the reconnect it is not). */
  get connected(): boolean {
    return this.client !== null;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString, application_name: 'a2a-service-listener' });
    client.on('notification', (message) => {
      if (message.channel !== this.channel || !message.payload) return;
      this.handlers.notification(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = 100;
  }

  private lost(client: Client, error?: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    this.logger.warn({ err: error?.message }, 'task notification listener lost its connection; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect().then(
        () => this.handlers.reconnected(),
        (error: Error) => {
          if (this.stopped) return;
          this.logger.warn(
            { err: error.message, retry_ms: this.backoffMs },
            'task notification listener could not reconnect',
          );
          this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
          this.scheduleReconnect();
        },
      );
    }, this.backoffMs);
    this.retry.unref();
  }
}
