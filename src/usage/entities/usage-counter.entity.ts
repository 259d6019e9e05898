import { Column, Entity, PrimaryColumn } from 'typeorm';

export type CounterPeriod = 'day' | 'month';

/**
 * A requester's budget counters (docs/api.md §18): its sends in one UTC day, its
 * reported cost in one UTC month, each with the limit it was counted against.
 */
@Entity({ name: 'usage_counters' })
export class UsageCounter {
  @PrimaryColumn({ name: 'identity_id', type: 'uuid' })
  identityId: string;

  @PrimaryColumn({ type: 'varchar' })
  period: CounterPeriod;

  @PrimaryColumn({ name: 'starts_at', type: 'timestamptz' })
  startsAt: Date;

  @Column({ type: 'integer' })
  tasks: number;

  @Column({ name: 'task_quota', type: 'integer', nullable: true })
  taskQuota: number | null;

  @Column({ type: 'numeric' })
  cost: string;

  @Column({ name: 'cost_budget', type: 'numeric', nullable: true })
  costBudget: string | null;

  /** The highest threshold announced for the period (0, 80 or 100). */
  @Column({ type: 'smallint' })
  notified: number;
}
