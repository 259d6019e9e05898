import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/**
 * The dispatchers' unit of work: one outbox event for one webhook, or one task event
 * for one A2A push notification config.
 */
@Entity({ name: 'deliveries' })
export class Delivery {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid', nullable: true })
  webhookId: string | null;

  @Column({ name: 'event_id', type: 'varchar', nullable: true })
  eventId: string | null;

  /** A push notification: the task and config it goes to, and the task event (`seq`) it reports. */
  @Column({ name: 'push_task_id', type: 'uuid', nullable: true })
  pushTaskId: string | null;

  @Column({ name: 'push_config_id', type: 'varchar', nullable: true })
  pushConfigId: string | null;

  @Column({ name: 'push_seq', type: 'integer', nullable: true })
  pushSeq: number | null;

  @Column({ type: 'varchar' })
  status: DeliveryStatus;

  /** Attempts started so far (each claim by a dispatcher is one). */
  @Column({ type: 'integer' })
  attempts: number;

  /** Claimed by a dispatcher; next_attempt_at is then the end of its lease. */
  @Column({ name: 'in_flight', type: 'boolean' })
  inFlight: boolean;

  /** When a pending delivery is due; null once it has succeeded or failed. */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null;

  @Column({ name: 'last_status_code', type: 'smallint', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', nullable: true })
  lastError: string | null;

  @Column({ name: 'last_duration_ms', type: 'integer', nullable: true })
  lastDurationMs: number | null;

  /** A push notification's: the `traceparent` of the change it reports (a webhook's is its event's); null without tracing. */
  @Column({ type: 'varchar', nullable: true })
  traceparent: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
