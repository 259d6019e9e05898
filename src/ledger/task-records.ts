import { randomUUID } from 'node:crypto';
import type { A2AVersion } from './entities/push-notification-config.entity';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { MessageRole } from './entities/task-message.entity';
import type { StoredPart } from './parts';
import type { TaskState } from './task-state';

/**
 * What the ledger hands to the rest of the service: plain records, protocol-neutral
 * (parts in the stored A2A v1.0 JSON form). The protocol maps them to the SDK's
 * types, the REST API to its views. The ledger's repositories read them.
 */
export interface Participant {
  id: string;
  handle: string;
  organizationId: string;
}

export interface MessageRecord {
  /** messages.id */
  rowId: string;
  /** The A2A messageId. */
  messageId: string;
  taskId: string;
  contextId: string;
  role: MessageRole;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  extensions: string[];
  referenceTaskIds: string[];
  seq: number;
  createdAt: Date;
}

export interface ArtifactRecord {
  artifactId: string;
  name: string;
  description: string;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
}

/**
 * A task's own columns, as the ledger's writers hold it under the task's row lock (the
 * journal changes its state, seq and times) and as listings read it before hydrating.
 */
export interface TaskHead {
  id: string;
  contextId: string;
  requester: Participant;
  worker: Participant;
  state: TaskState;
  /** The row id (messages.id) of the agent message that came with the current status. */
  statusMessageId: string | null;
  statusTimestamp: Date;
  metadata: Record<string, unknown> | null;
  /** The skill the task's first message named (docs/api.md §16). */
  skill: string | null;
  /** Waiting for approval, or refused without it: never shown to the worker's side (docs/api.md §16). */
  held: boolean;
  /** Number of the last event: a stream that starts here continues after it. */
  seq: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A task as reads hand it out: its head, with its status message, latest history and artifacts. */
export interface TaskRecord extends Omit<TaskHead, 'statusMessageId'> {
  /** The agent message that came with the current status. */
  statusMessage: MessageRecord | null;
  /** Oldest first; the most recent `historyLength` when one was asked for. */
  history: MessageRecord[];
  /** Null when the read did not ask for artifacts. */
  artifacts: ArtifactRecord[] | null;
}

/** A forwarded task's ids at its upstream agent (shown to the worker's side only). */
export interface UpstreamIds {
  taskId: string;
  contextId: string;
}

export interface TaskEventRecord {
  seq: number;
  kind: TaskEventKind;
  /** The task's state after the event. */
  state: TaskState;
  message: MessageRecord | null;
  artifact: ArtifactChunk | null;
  createdAt: Date;
}

export interface HydrateOptions {
  /**
   * The n most recent messages (0: none). Required: no read loads a task's whole
   * history, which may be long (LEDGER_MAX_HISTORY bounds what callers ask for).
   */
  historyLength: number;
  artifacts: boolean;
  /**
   * At most this much artifact content per task (LEDGER_MAX_ARTIFACT_BYTES_PER_TASK,
   * set by the services): whole artifacts, in order, while they fit. Writes keep every
   * task within it; this bounds a read of a task written before the limit existed.
   */
  maxArtifactBytes?: number;
}

/** The two identities a protocol call is about: the caller and the handle's identity. */
export interface TaskPair {
  requester: Participant;
  worker: Participant;
}

/** A forwarded task as the forwarder needs it. */
export interface ForwardedTask {
  id: string;
  state: TaskState;
  workerIdentityId: string;
  upstreamTaskId: string | null;
  upstreamContextId: string | null;
}

/** Where a new task may join a tree (docs/api.md §18): the task ids its message references, and how deep a tree may grow. */
export interface NewTaskTree {
  refs: string[];
  maxDepth: number;
}

export interface NewMessage {
  messageId: string;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  extensions: string[];
  referenceTaskIds: string[];
}

export interface ContextRecord {
  id: string;
  requester: Participant;
  worker: Participant;
  createdAt: Date;
  updatedAt: Date;
}

export interface PushConfigInput {
  /** Empty: the service picks one. The same id on the same task replaces the config. */
  id: string;
  url: string;
  token: string;
  authentication: { scheme: string; credentials: string } | null;
}

export interface PushConfigRecord extends PushConfigInput {
  taskId: string;
  protocolVersion: A2AVersion;
}

/** A status message of the service's own words (an upstream's failure, an approval's outcome). */
export function agentText(text: string): NewMessage {
  return {
    messageId: randomUUID(),
    parts: [{ text }],
    metadata: null,
    extensions: [],
    referenceTaskIds: [],
  };
}
