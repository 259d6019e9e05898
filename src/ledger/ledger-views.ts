import { toPartView, type PartView } from './parts';
import { participantsOf, type ArtifactRecord, type MessageRecord, type Participant, type TaskRecord, type TaskRow } from './task-records';
import type { TaskState } from './task-state';

/**
 * REST views of the ledger (CONTRACT §7). A2A members keep the A2A v0.3 JSON form
 * and camelCase (`kind`, lowercase states and roles, the same spelling as the REST
 * filters and the reply body); what the REST API adds is snake_case.
 */
export interface ParticipantView {
  id: string;
  agent_handle: string;
  organization_id: string;
}

export interface MessageView {
  kind: 'message';
  messageId: string;
  role: 'user' | 'agent';
  parts: PartView[];
  taskId: string;
  contextId: string;
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
  created_at: string;
}

export interface ArtifactView {
  artifactId: string;
  name?: string;
  description?: string;
  parts: PartView[];
  metadata?: Record<string, unknown>;
}

export interface TaskView {
  kind: 'task';
  id: string;
  contextId: string;
  status: { state: TaskState; message?: MessageView; timestamp: string };
  history: MessageView[];
  artifacts?: ArtifactView[];
  metadata?: Record<string, unknown>;
  requester: ParticipantView;
  worker: ParticipantView;
  created_at: string;
  updated_at: string;
}

/** A task as an event reports it: the task view without history, artifacts or status message. */
export type TaskSummaryView = Omit<TaskView, 'history' | 'artifacts' | 'status'> & { status: { state: TaskState; timestamp: string } };

export interface ContextRecord {
  id: string;
  requester: Participant;
  worker: Participant;
  createdAt: Date;
  updatedAt: Date;
}

export interface ContextView {
  id: string;
  requester: ParticipantView;
  worker: ParticipantView;
  created_at: string;
  updated_at: string;
}

export function toParticipantView(participant: Participant): ParticipantView {
  return { id: participant.id, agent_handle: participant.handle, organization_id: participant.organizationId };
}

export function toMessageView(message: MessageRecord): MessageView {
  return {
    kind: 'message',
    messageId: message.messageId,
    role: message.role,
    parts: message.parts.map(toPartView),
    taskId: message.taskId,
    contextId: message.contextId,
    ...(message.metadata ? { metadata: message.metadata } : {}),
    ...(message.extensions.length > 0 ? { extensions: message.extensions } : {}),
    ...(message.referenceTaskIds.length > 0 ? { referenceTaskIds: message.referenceTaskIds } : {}),
    created_at: message.createdAt.toISOString(),
  };
}

export function toArtifactView(artifact: ArtifactRecord): ArtifactView {
  return {
    artifactId: artifact.artifactId,
    ...(artifact.name ? { name: artifact.name } : {}),
    ...(artifact.description ? { description: artifact.description } : {}),
    parts: artifact.parts.map(toPartView),
    ...(artifact.metadata ? { metadata: artifact.metadata } : {}),
  };
}

/** `artifacts` is present only when the read asked for them. */
export function toTaskView(task: TaskRecord): TaskView {
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    status: {
      state: task.state,
      ...(task.statusMessage ? { message: toMessageView(task.statusMessage) } : {}),
      timestamp: task.statusTimestamp.toISOString(),
    },
    history: task.history.map(toMessageView),
    ...(task.artifacts ? { artifacts: task.artifacts.map(toArtifactView) } : {}),
    ...(task.metadata ? { metadata: task.metadata } : {}),
    requester: toParticipantView(task.requester),
    worker: toParticipantView(task.worker),
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

export function toTaskSummaryView(row: TaskRow): TaskSummaryView {
  const { requester, worker } = participantsOf(row);
  return {
    kind: 'task',
    id: row.id,
    contextId: row.context_id,
    status: { state: row.state, timestamp: row.status_timestamp.toISOString() },
    ...(row.metadata ? { metadata: row.metadata } : {}),
    requester: toParticipantView(requester),
    worker: toParticipantView(worker),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toContextView(context: ContextRecord): ContextView {
  return {
    id: context.id,
    requester: toParticipantView(context.requester),
    worker: toParticipantView(context.worker),
    created_at: context.createdAt.toISOString(),
    updated_at: context.updatedAt.toISOString(),
  };
}
