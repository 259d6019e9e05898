import { Client } from 'pg';
import type { Logger } from 'pino';
import { withTimeout } from './with-timeout';

const MAX_BACKOFF_MS = 5_000;
/** How often an idle listening connection is asked `SELECT 1`, and how long its answer may take. */
const HEARTBEAT_MS = 10_000;
/** How long `stop` waits for the server to take its goodbye before dropping the socket. */
const GOODBYE_MS = 1_000;

export interface PgListenerHandlers {
  /** A notification's payload on the channel. */
  notification(payload: string): void;
  /** The connection was lost: notifications sent from now until it is back are lost. */
  lost(): void;
  /**
   * The connection listens — first, or `again` after a loss (notifications sent in
   * between are lost). Told as `connected` turns true, in the same turn.
   */
  listening(again: boolean): void;
}

/**
 * PostgreSQL LISTEN on one channel, over one dedicated connection (not TypeORM's
 * pool, whose connections come and go). Connection-level plumbing: when the
 * connection drops it reconnects with backoff and says so, since notifications sent
 * in between are lost. A connection that stops answering without closing (a server
 * gone without a word, a network that dropped it) is found by a heartbeat — `SELECT 1`
 * every `heartbeatMs`, unanswered within as long — and dropped the same way: a
 * listener that only listens would otherwise wait on it for ever. The notifications
 * themselves are sent by the statements of the repositories (`pg_notify`) and by
 * triggers, delivered when their transaction commits.
 */
export class PgListener {
  private client: Client | null = null;
  private stopped = false;
  private backoffMs = 100;
  private retry: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly logger: Logger,
    private readonly handlers: PgListenerHandlers,
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  start(): Promise<void> {
    return this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) {
      clearTimeout(this.retry);
    }
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
    }
    const client = this.client;
    this.client = null;
    if (!client) {
      return;
    }
    // A connection fallen silent never takes a goodbye (node-postgres waits for the
    // close): after GOODBYE_MS its socket is dropped (a field of node-postgres's own; `pg` is pinned).
    await withTimeout(client.end(), GOODBYE_MS, () => new Error('no goodbye')).catch(() =>
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(),
    );
  }

  /** The LISTEN connection is up (between a loss and the reconnect it is not). */
  get connected(): boolean {
    return this.client !== null;
  }

  /** Connects and listens; `again` after a loss. */
  private async connect(again = false): Promise<void> {
    const client = new Client({ connectionString: this.connectionString, application_name: 'a2a-service-listener' });
    client.on('notification', (message) => {
      if (message.channel !== this.channel || !message.payload) {
        return;
      }
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
    this.beat(client);
    // Told at once, as `connected` turns true: nothing may run between the two and
    // take this connection for one that missed nothing (a standing change, say).
    this.handlers.listening(again);
  }

  /**
   * Asks `client` to answer every heartbeatMs; one that does not in as long, or fails,
   * is lost — and ended: with a query on its way, node-postgres destroys its socket
   * rather than wait on a silent peer.
   */
  private beat(client: Client): void {
    let asking = false;
    this.heartbeat = setInterval(() => {
      if (asking) {
        return;
      }
      asking = true;
      withTimeout(
        client.query('SELECT 1'),
        this.heartbeatMs,
        () => new Error(`no answer to a heartbeat in ${this.heartbeatMs} ms`),
      ).then(
        () => (asking = false),
        (error: Error) => this.lost(client, error),
      );
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private lost(client: Client, error?: Error): void {
    if (this.stopped || this.client !== client) {
      return;
    }
    this.client = null;
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
    }
    this.heartbeat = null;
    this.logger.warn({ err: error?.message }, 'task notification listener lost its connection; reconnecting');
    this.handlers.lost();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect(true).then(
        () => undefined,
        (error: Error) => {
          if (this.stopped) {
            return;
          }
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
