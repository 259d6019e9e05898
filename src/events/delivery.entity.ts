import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One event for one subscription; the dispatchers' unit of work. */
@Entity({ name: 'deliveries' })
export class Delivery {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  @Column({ name: 'event_id', type: 'varchar' })
  eventId: string;

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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
