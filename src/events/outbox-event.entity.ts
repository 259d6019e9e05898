import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
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
}
