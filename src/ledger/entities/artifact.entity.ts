import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { StoredPart } from '../parts';

/** A task output, as accumulated from the worker's chunks (append / lastChunk). */
@Entity({ name: 'artifacts' })
export class Artifact {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'task_id', type: 'uuid' })
  taskId: string;

  @Column({ name: 'artifact_id', type: 'varchar' })
  artifactId: string;

  @Column({ type: 'varchar' })
  name: string;

  @Column({ type: 'varchar' })
  description: string;

  @Column({ type: 'jsonb' })
  parts: StoredPart[];

  @Column({ type: 'jsonb', nullable: true })
  metadata: Record<string, unknown> | null;

  /** The worker said this was the last chunk: nothing more may be appended. */
  @Column({ name: 'last_chunk', type: 'boolean' })
  lastChunk: boolean;

  /** The size of `parts` (their JSON, UTF-8 bytes): counts against LEDGER_MAX_ARTIFACT_BYTES_PER_TASK. */
  @Column({ name: 'content_bytes', type: 'integer' })
  contentBytes: number;

  /** The event that first created it; orders a task's artifacts. */
  @Column({ type: 'integer' })
  seq: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
