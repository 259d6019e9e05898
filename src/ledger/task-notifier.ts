import { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';

/** A task changed; its events up to `seq` are committed. */
export interface TaskChange {
  taskId: string;
  seq: number;
}

/**
 * Wake-ups for whoever waits on a task (blocking sends, SSE streams), across every
 * instance of the service on one database. A notification only says "task X has
 * changed"; listeners re-read the ledger, so order and completeness come from the
 * database, never from the notification. Listeners may therefore be woken more often
 * than needed (after a reconnect, all of them are), never less.
 */
export abstract class TaskNotifier {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Called inside the transaction that made the change. */
  abstract announce(em: EntityManager, change: TaskChange): Promise<void>;

  /** Called once that transaction has committed. */
  abstract committed(change: TaskChange): void;

  /** For /readyz: whether the cross-instance channel is up; null when there is none (embedded). */
  abstract healthy(): boolean | null;

  /** Calls `listener` whenever the task may have changed; returns the unsubscribe. */
  subscribe(taskId: string, listener: () => void): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  /** How many listeners are waiting (on one task, or on all): shows that streams clean up after themselves. */
  listenerCount(taskId?: string): number {
    if (taskId !== undefined) return this.listeners.get(taskId)?.size ?? 0;
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }

  protected wake(taskId: string): void {
    for (const listener of [...(this.listeners.get(taskId) ?? [])]) listener();
  }

  protected wakeAll(): void {
    for (const taskId of [...this.listeners.keys()]) this.wake(taskId);
  }
}

/** Embedded mode (one process, no DATABASE_URL): an in-process bus, woken after commit. */
export class LocalTaskNotifier extends TaskNotifier {
  async announce(): Promise<void> {
    // Nothing to do inside the transaction: listeners are woken once it has committed.
  }

  committed(change: TaskChange): void {
    this.wake(change.taskId);
  }

  healthy(): null {
    return null;
  }
}

/** The one LISTEN/NOTIFY channel: `taskId:seq` for a task, `events:<organization>:0` for the outbox. */
export const CHANGES_CHANNEL = 'a2a_task_changes';
const CHANNEL = CHANGES_CHANNEL;

/**
 * The key that the outbox's commits wake (instead of a task id): the event stream of
 * an organization listens on it. The notification is sent by the statement that
 * writes the event (EventsService), so it reaches every instance after the commit.
 */
export const eventsKey = (organizationId: string) => `events:${organizationId}`;
const MAX_BACKOFF_MS = 5_000;

/**
 * PostgreSQL LISTEN/NOTIFY. The change's transaction issues `pg_notify`, which
 * PostgreSQL delivers only when that transaction commits, to every listening session
 * — this instance's and the others'. Each instance listens on one dedicated
 * connection (not TypeORM's pool, whose connections come and go); when it drops, the
 * notifier reconnects with backoff and wakes every listener, since notifications sent
 * in between are lost.
 */
export class PgTaskNotifier extends TaskNotifier implements OnModuleInit, OnModuleDestroy {
  private client: Client | null = null;
  private stopped = false;
  private backoffMs = 100;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  async announce(em: EntityManager, change: TaskChange): Promise<void> {
    await em.query('SELECT pg_notify($1, $2)', [CHANNEL, `${change.taskId}:${change.seq}`]);
  }

  committed(): void {
    // PostgreSQL delivers the notification to every listener, this instance included.
  }

  /** The LISTEN connection is up (between a loss and the reconnect it is not). */
  healthy(): boolean {
    return this.client !== null;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString, application_name: 'a2a-service-listener' });
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) return;
      this.wake(message.payload.slice(0, message.payload.lastIndexOf(':')));
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
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
        () => this.wakeAll(),
        (error: Error) => {
          if (this.stopped) return;
          this.logger.warn({ err: error.message, retry_ms: this.backoffMs }, 'task notification listener could not reconnect');
          this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
          this.scheduleReconnect();
        },
      );
    }, this.backoffMs);
    this.retry.unref();
  }
}
