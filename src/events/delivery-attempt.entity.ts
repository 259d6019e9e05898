import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The log of one attempt of a delivery: what the endpoint answered, or why nothing was sent. */
@Entity({ name: 'delivery_attempts' })
export class DeliveryAttempt {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ type: 'integer' })
  attempt: number;

  @Column({ type: 'boolean' })
  succeeded: boolean;

  @Column({ name: 'status_code', type: 'smallint', nullable: true })
  statusCode: number | null;

  @Column({ type: 'varchar', nullable: true })
  error: string | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  /** The endpoint's response headers (bounded, no cookie or credential); null when nothing answered. */
  @Column({ name: 'response_headers', type: 'jsonb', nullable: true })
  responseHeaders: Record<string, string> | null;

  /** The first 1,024 bytes of the response body; null when nothing answered. */
  @Column({ name: 'response_body', type: 'varchar', nullable: true })
  responseBody: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
