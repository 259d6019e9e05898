import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { StoredPart } from '../parts';

export type MessageRole = 'user' | 'agent';

/** A message in a task's history: the requester's (`user`) or the worker's (`agent`). */
@Entity({ name: 'messages' })
export class TaskMessage {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'task_id', type: 'uuid' })
  taskId: string;

  /** The A2A messageId, chosen by the sender. */
  @Column({ name: 'message_id', type: 'varchar' })
  messageId: string;

  @Column({ type: 'varchar' })
  role: MessageRole;

  @Column({ type: 'jsonb' })
  parts: StoredPart[];

  @Column({ type: 'jsonb', nullable: true })
  metadata: Record<string, unknown> | null;

  @Column({ type: 'jsonb' })
  extensions: string[];

  @Column({ name: 'reference_task_ids', type: 'jsonb' })
  referenceTaskIds: string[];

  /** The task event that brought the message; orders the history. */
  @Column({ type: 'integer' })
  seq: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
