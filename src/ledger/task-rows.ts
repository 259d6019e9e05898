import type { JsonRow, RowOf } from '../database/row';
import type { Participants } from './entities/participants.embedded';
import type { Task } from './entities/task.entity';
import type { Participant, TaskHead } from './task-records';

/**
 * The ledger's rows as its SQL reads them (snake_case, typed from the entities), and
 * their mapping to the records the services hold. Only the ledger's repositories import
 * this file (test/architecture/import-layers checks it): a row never leaves them.
 */

/** The participant columns that tasks and contexts share. */
export type ParticipantRow = RowOf<Participants>;

/** A task's row as the ledger reads it (every column but the origin message and the upstream ids). */
export type TaskRow = Pick<
  RowOf<Task>,
  | 'id'
  | 'context_id'
  | 'state'
  | 'status_message_id'
  | 'status_timestamp'
  | 'metadata'
  | 'skill'
  | 'held'
  | 'seq'
  | 'created_at'
  | 'updated_at'
> &
  ParticipantRow;

export function participantsOf(row: ParticipantRow): { requester: Participant; worker: Participant } {
  return {
    requester: {
      id: row.requester_identity_id,
      handle: row.requester_handle,
      organizationId: row.requester_organization_id,
    },
    worker: { id: row.worker_identity_id, handle: row.worker_handle, organizationId: row.worker_organization_id },
  };
}

export function taskHeadOf(row: TaskRow): TaskHead {
  return {
    id: row.id,
    contextId: row.context_id,
    ...participantsOf(row),
    state: row.state,
    statusMessageId: row.status_message_id,
    statusTimestamp: row.status_timestamp,
    metadata: row.metadata,
    skill: row.skill,
    held: row.held,
    seq: row.seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** taskHeadOf a row that PostgreSQL turned into JSON (to_jsonb): its times are strings. */
export function taskHeadOfJson(row: JsonRow<TaskRow>): TaskHead {
  return taskHeadOf({
    ...row,
    status_timestamp: new Date(row.status_timestamp),
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  });
}
