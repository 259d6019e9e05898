import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * The forwarder's queue (docs/api.md §14): one row per requester message, or cancel, for
 * a task whose worker has an upstream. Claimed with SKIP LOCKED; `attempts` counts
 * claims, `next_attempt_at` is the lease while `in_flight`, and `accepted` is set once
 * the upstream has answered a message, so a retry follows its task instead of sending again.
 */
@Entity({ name: 'upstream_forwards' })
export class UpstreamForward {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Queue order within a task (GENERATED ALWAYS AS IDENTITY). */
  @Column({ type: 'bigint', insert: false, update: false, select: false })
  seq: string;

  @Column({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @Column({ type: 'varchar' })
  kind: 'message' | 'cancel';

  /** The requester message's id; empty for a cancel. */
  @Column({ name: 'message_id', type: 'varchar' })
  messageId: string;

  @Column({ type: 'varchar' })
  status: 'pending' | 'succeeded' | 'failed';

  @Column({ type: 'boolean' })
  accepted: boolean;

  @Column({ type: 'integer' })
  attempts: number;

  @Column({ name: 'in_flight', type: 'boolean' })
  inFlight: boolean;

  /** When a pending forward falls due (or its lease ends); null once done. */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  /** The W3C `traceparent` of the send or cancel that queued it; null without tracing. */
  @Column({ type: 'varchar', nullable: true })
  traceparent: string | null;

  @Column({ name: 'last_error', type: 'varchar', nullable: true })
  lastError: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
