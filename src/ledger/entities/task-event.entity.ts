import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { StoredPart } from '../parts';
import type { TaskState } from '../task-state';

export type TaskEventKind = 'status' | 'message' | 'artifact';

/** One artifact chunk as the worker sent it (the artifacts table holds the sum). */
export interface ArtifactChunk {
  artifactId: string;
  name: string;
  description: string;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  append: boolean;
  lastChunk: boolean;
}

/**
 * Every change to a task, numbered 1, 2, 3… per task. `status`: the state (and maybe
 * an agent message) after the change; `message`: a requester message that did not
 * change the state; `artifact`: one chunk. Streams replay these in order.
 */
@Entity({ name: 'task_events' })
export class TaskEvent {
  @PrimaryColumn({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @PrimaryColumn({ type: 'integer' })
  seq: number;

  @Column({ type: 'varchar' })
  kind: TaskEventKind;

  /** The task's state after this event. */
  @Column({ type: 'varchar' })
  state: TaskState;

  /** messages.id of the message this event brought, if any. */
  @Column({ name: 'message_id', type: 'uuid', nullable: true })
  messageId: string | null;

  @Column({ type: 'jsonb', nullable: true })
  artifact: ArtifactChunk | null;

  /** The W3C trace id of the request that made the change; null without tracing. */
  @Column({ name: 'trace_id', type: 'varchar', nullable: true })
  traceId: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
