import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The usage rollups (docs/api.md §18): the tasks created in one hour between one
 * requester and one worker (each identity's two roles read from the one row), whose
 * cost was in one currency (`''`: none), added to as each of them ends.
 */
@Entity({ name: 'usage_hourly' })
export class UsageHourly {
  @PrimaryColumn({ type: 'timestamptz' })
  hour: Date;

  @PrimaryColumn({ name: 'requester_identity_id', type: 'uuid' })
  requesterIdentityId: string;

  @Column({ name: 'requester_organization_id', type: 'uuid' })
  requesterOrganizationId: string;

  @PrimaryColumn({ name: 'worker_identity_id', type: 'uuid' })
  workerIdentityId: string;

  @Column({ name: 'worker_organization_id', type: 'uuid' })
  workerOrganizationId: string;

  @PrimaryColumn({ type: 'varchar' })
  currency: string;

  /** Tasks that ended, and how. */
  @Column({ type: 'integer' })
  tasks: number;

  @Column({ type: 'integer' })
  completed: number;

  @Column({ type: 'integer' })
  failed: number;

  @Column({ type: 'integer' })
  canceled: number;

  @Column({ type: 'integer' })
  rejected: number;

  @Column({ type: 'bigint' })
  messages: string;

  @Column({ type: 'bigint' })
  parts: string;

  @Column({ name: 'artifact_bytes', type: 'bigint' })
  artifactBytes: string;

  @Column({ name: 'duration_ms', type: 'bigint' })
  durationMs: string;

  @Column({ name: 'input_tokens', type: 'bigint' })
  inputTokens: string;

  @Column({ name: 'output_tokens', type: 'bigint' })
  outputTokens: string;

  @Column({ type: 'numeric' })
  cost: string;
}
