import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A task's usage (docs/api.md §18): what its worker reported, added up over its replies
 * and upstream answers, and — once the task is terminal — what the service measured.
 */
@Entity({ name: 'task_usage' })
export class TaskUsage {
  @PrimaryColumn({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @Column({ name: 'input_tokens', type: 'bigint' })
  inputTokens: string;

  @Column({ name: 'output_tokens', type: 'bigint' })
  outputTokens: string;

  /** A decimal string; null when no report carried a cost. */
  @Column({ name: 'cost_amount', type: 'numeric', nullable: true })
  costAmount: string | null;

  /** ISO 4217, the currency of the first report that carried a cost. */
  @Column({ name: 'cost_currency', type: 'varchar', nullable: true })
  costCurrency: string | null;

  /** How many reports were added up. */
  @Column({ type: 'integer' })
  reports: number;

  /** Measured when the task became terminal (null until then). */
  @Column({ type: 'integer', nullable: true })
  messages: number | null;

  @Column({ type: 'integer', nullable: true })
  parts: number | null;

  @Column({ name: 'artifact_bytes', type: 'bigint', nullable: true })
  artifactBytes: string | null;

  /** From submitted to terminal. */
  @Column({ name: 'duration_ms', type: 'bigint', nullable: true })
  durationMs: string | null;

  /** Milliseconds spent in each state, by state. */
  @Column({ name: 'state_ms', type: 'jsonb', nullable: true })
  stateMs: Record<string, number> | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
