import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { toPartView, type PartView } from './parts';
import {
  type ArtifactRecord,
  type ContextRecord,
  type MessageRecord,
  type Participant,
  type TaskHead,
  type TaskRecord,
  type UpstreamIds,
} from './task-records';
import { TASK_STATES, type TaskState } from './task-state';

/**
 * REST views of the ledger (docs/api.md §7). A2A members keep the A2A v0.3 JSON form
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
  /** The skill its first message named (docs/api.md §16); null when it named none. */
  skill: string | null;
  requester: ParticipantView;
  worker: ParticipantView;
  /** A forwarded task's ids at the upstream agent: on the worker's side only (TasksService). */
  upstream_task_id?: string;
  upstream_context_id?: string;
  /** Present (true) while the task waits for a person's approval of the pair's first contact (docs/api.md §16). */
  awaiting_approval?: true;
  created_at: string;
  updated_at: string;
}

/** A task as an event reports it: the task view without history, artifacts or status message. */
export type TaskSummaryView = Omit<
  TaskView,
  'history' | 'artifacts' | 'status' | 'upstream_task_id' | 'upstream_context_id' | 'awaiting_approval'
> & {
  status: { state: TaskState; timestamp: string };
};

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

/** `artifacts` is present only when the read asked for them; `upstream` only for the worker's side. */
export function toTaskView(task: TaskRecord, upstream?: UpstreamIds): TaskView {
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
    skill: task.skill,
    requester: toParticipantView(task.requester),
    worker: toParticipantView(task.worker),
    ...(upstream ? { upstream_task_id: upstream.taskId, upstream_context_id: upstream.contextId } : {}),
    ...(task.held ? { awaiting_approval: true as const } : {}),
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

export function toTaskSummaryView(task: TaskHead): TaskSummaryView {
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    status: { state: task.state, timestamp: task.statusTimestamp.toISOString() },
    ...(task.metadata ? { metadata: task.metadata } : {}),
    skill: task.skill,
    requester: toParticipantView(task.requester),
    worker: toParticipantView(task.worker),
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
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

// --- OpenAPI schemas of the views above (each must list every field its view has) ---

@ApiSchema({ name: 'FileContent' })
class FileContentSchema {
  @ApiPropertyOptional({ description: 'Base64 content (or `uri`).' }) bytes?: string;
  @ApiPropertyOptional({ format: 'uri' }) uri?: string;
  @ApiPropertyOptional() mimeType?: string;
  @ApiPropertyOptional() name?: string;
}

/** An A2A v0.3 Part: `text`, `file` or `data`, by `kind`. */
@ApiSchema({ name: 'Part' })
export class PartSchema {
  @ApiProperty({ enum: ['text', 'file', 'data'] }) kind: 'text' | 'file' | 'data';
  @ApiPropertyOptional({ description: 'kind `text`.' }) text?: string;
  @ApiPropertyOptional({ type: FileContentSchema, description: 'kind `file`.' }) file?: FileContentSchema;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'kind `data`.' }) data?: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
}

@ApiSchema({ name: 'Participant' })
export class ParticipantSchema implements ParticipantView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() agent_handle: string;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
}

@ApiSchema({ name: 'Message' })
export class MessageSchema implements MessageView {
  @ApiProperty({ enum: ['message'] }) kind: 'message';
  @ApiProperty() messageId: string;
  @ApiProperty({ enum: ['user', 'agent'], description: '`user`: the requester; `agent`: the worker.' }) role:
    'user' | 'agent';
  @ApiProperty({ type: [PartSchema] }) parts: PartView[];
  @ApiProperty({ format: 'uuid' }) taskId: string;
  @ApiProperty({ format: 'uuid' }) contextId: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
  @ApiPropertyOptional({ type: [String] }) extensions?: string[];
  @ApiPropertyOptional({ type: [String] }) referenceTaskIds?: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

@ApiSchema({ name: 'Artifact' })
export class ArtifactSchema implements ArtifactView {
  @ApiProperty() artifactId: string;
  @ApiPropertyOptional() name?: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ type: [PartSchema] }) parts: PartView[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
}

@ApiSchema({ name: 'TaskStatus' })
class TaskStatusSchema {
  @ApiProperty({ enum: TASK_STATES }) state: TaskState;
  @ApiPropertyOptional({ type: MessageSchema, description: 'The agent message that came with this status, if any.' })
  message?: MessageView;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
}

/** A task: the A2A v0.3 shape plus who takes part and when. */
@ApiSchema({ name: 'Task' })
export class TaskSchema implements TaskView {
  @ApiProperty({ enum: ['task'] }) kind: 'task';
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) contextId: string;
  @ApiProperty({ type: TaskStatusSchema }) status: TaskView['status'];
  @ApiProperty({ type: [MessageSchema], description: 'The most recent messages, oldest first (`history_length`).' })
  history: MessageView[];
  @ApiPropertyOptional({ type: [ArtifactSchema] }) artifacts?: ArtifactView[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The skill its first message named (docs/api.md §16); null when it named none.',
  })
  skill: string | null;
  @ApiProperty({ type: ParticipantSchema }) requester: ParticipantView;
  @ApiProperty({ type: ParticipantSchema }) worker: ParticipantView;
  @ApiPropertyOptional({
    description:
      "A task forwarded to the worker's upstream agent: the task's id there. Shown to the worker's side only (its organization, its own key).",
  })
  upstream_task_id?: string;
  @ApiPropertyOptional({
    description:
      "A task forwarded to the worker's upstream agent: the context's id there. Shown to the worker's side only.",
  })
  upstream_context_id?: string;
  @ApiPropertyOptional({
    enum: [true],
    description:
      "Present while the task waits for a person's approval of the pair's first contact (docs/api.md §16): its requester's side sees it in `auth-required`; its worker's side does not see it yet.",
  })
  awaiting_approval?: true;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

@ApiSchema({ name: 'Context' })
export class ContextSchema implements ContextView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: ParticipantSchema }) requester: ParticipantView;
  @ApiProperty({ type: ParticipantSchema }) worker: ParticipantView;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/** A context with its most recent tasks. */
@ApiSchema({ name: 'ContextWithTasks' })
export class ContextWithTasksSchema extends ContextSchema {
  @ApiProperty({ type: [TaskSchema] }) tasks: TaskView[];
}

export const TaskPage = PageOf(TaskSchema, 'tasks', 'TaskList');
export const MessagePage = PageOf(MessageSchema, 'messages', 'MessageList');
export const ContextPage = PageOf(ContextSchema, 'contexts', 'ContextList');
