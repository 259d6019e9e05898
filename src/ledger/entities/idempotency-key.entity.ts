import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The first successful response to a request sent with an `Idempotency-Key`. */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyKey {
  /** Who used the key and for what, e.g. `task_reply:agent:<key id>`. */
  @PrimaryColumn({ type: 'varchar' })
  scope: string;

  @PrimaryColumn({ type: 'varchar' })
  key: string;

  /** SHA-256 of the request (path and canonical body). */
  @Column({ name: 'request_hash', type: 'bytea' })
  requestHash: Buffer;

  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody: unknown;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
