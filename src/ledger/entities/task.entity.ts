import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { TaskState } from '../task-state';
import { Participants } from './participants.embedded';

/** An A2A task: the requester and the worker are recorded on every one. */
@Entity({ name: 'tasks' })
export class Task {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'context_id', type: 'uuid' })
  contextId: string;

  /** The requester and the worker, recorded on every task. */
  @Column(() => Participants, { prefix: false })
  participants: Participants;

  /** The A2A messageId of the message that created the task (retries find it again). */
  @Column({ name: 'origin_message_id', type: 'varchar' })
  originMessageId: string;

  @Column({ type: 'varchar' })
  state: TaskState;

  /** The agent message that came with the current status, if any. */
  @Column({ name: 'status_message_id', type: 'uuid', nullable: true })
  statusMessageId: string | null;

  @Column({ name: 'status_timestamp', type: 'timestamptz' })
  statusTimestamp: Date;

  @Column({ type: 'jsonb', nullable: true })
  metadata: Record<string, unknown> | null;

  /** The skill the task's first message named (docs/api.md §16); null when it named none. */
  @Column({ type: 'varchar', nullable: true })
  skill: string | null;

  /** A forwarded task's id at its upstream agent, recorded the first time it is known. */
  @Column({ name: 'upstream_task_id', type: 'varchar', nullable: true })
  upstreamTaskId: string | null;

  /** A forwarded task's context id at its upstream agent. */
  @Column({ name: 'upstream_context_id', type: 'varchar', nullable: true })
  upstreamContextId: string | null;

  /**
   * A new task waiting for a person's approval, or refused without it (docs/api.md §16):
   * never shown to the worker's side. Cleared when the task is approved.
   */
  @Column({ type: 'boolean', default: false })
  held: boolean;

  /**
   * The task its requester worked on when it sent this one, naming it (docs/api.md §18):
   * null for a root. Set when the task is inserted, never changed.
   */
  @Column({ name: 'parent_task_id', type: 'uuid', nullable: true })
  parentTaskId: string | null;

  /** The root of its delegation tree (null for a root). */
  @Column({ name: 'root_task_id', type: 'uuid', nullable: true })
  rootTaskId: string | null;

  /** 0 for a root; its parent's depth + 1 (at most LEDGER_MAX_TREE_DEPTH). */
  @Column({ type: 'smallint' })
  depth: number;

  /** Number of the task's last event (task_events.seq). */
  @Column({ type: 'integer' })
  seq: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
