import { Column, CreateDateColumn, Entity, PrimaryColumn, VirtualColumn, type ColumnType } from 'typeorm';
import type { EventType } from './event-types';

/** A row of the outbox: an event, written in the transaction of the change it reports. */
@Entity({ name: 'events' })
export class OutboxEvent {
  /** `evt_` and a ULID; the `webhook-id` of every delivery of this event. */
  @PrimaryColumn({ type: 'varchar' })
  id: string;

  @Column({ type: 'varchar' })
  type: EventType;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** The organization's identities this event is about (identity-scoped subscriptions match them). */
  @Column({ name: 'identity_ids', type: 'uuid', array: true })
  identityIds: string[];

  @Column({ type: 'json' })
  data: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** The W3C `traceparent` of the change, sent on every delivery of the event; null without tracing. */
  @Column({ type: 'varchar', nullable: true })
  traceparent: string | null;

  /**
   * The id of the transaction that wrote it (xid8, as decimal text): the stream's
   * order is (txid, seq) (migration 1763700900000). TypeORM has no xid8 column type,
   * so it is declared as a virtual column; only the repository's SQL reads it.
   */
  @VirtualColumn({ type: 'xid8' as ColumnType, select: false, query: (alias) => `SELECT ${alias}.txid::text` })
  txid: string;

  /** The row's number in write order (bigint, as decimal text). */
  @Column({ type: 'bigint', insert: false, update: false, select: false })
  seq: string;
}
