import { isObject } from '../common/json-object';
import {
  Part,
  Role,
  TaskState as A2AState,
  type Artifact,
  type Message,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { NewMessage, PushConfigInput, PushConfigRecord } from '../ledger/task-records';
import type { ArtifactRecord, MessageRecord, TaskEventRecord, TaskRecord } from '../ledger/task-records';
import type { FieldError } from '../common/app-error';
import { MAX_MESSAGE_PARTS, parsePart, type StoredPart } from '../ledger/parts';
import type { TaskState } from '../ledger/task-state';

/**
 * Ledger records ⇄ the SDK's A2A types (the v1.0 model; the SDK's transport handlers
 * turn them into v1.0 or v0.3 JSON on the wire). Parts are stored in the v1.0 JSON
 * form, so the SDK's own `Part.fromJSON` / `Part.toJSON` convert them.
 */
const TO_A2A: Record<TaskState, A2AState> = {
  submitted: A2AState.TASK_STATE_SUBMITTED,
  working: A2AState.TASK_STATE_WORKING,
  'input-required': A2AState.TASK_STATE_INPUT_REQUIRED,
  'auth-required': A2AState.TASK_STATE_AUTH_REQUIRED,
  completed: A2AState.TASK_STATE_COMPLETED,
  failed: A2AState.TASK_STATE_FAILED,
  canceled: A2AState.TASK_STATE_CANCELED,
  rejected: A2AState.TASK_STATE_REJECTED,
};
const FROM_A2A = new Map(Object.entries(TO_A2A).map(([state, a2a]) => [a2a, state as TaskState]));

/** A state filter from a request; UNSPECIFIED means none. */
export function stateFilter(state: A2AState | undefined): TaskState | undefined {
  if (state === undefined || state === A2AState.TASK_STATE_UNSPECIFIED) {
    return undefined;
  }
  const mapped = FROM_A2A.get(state);
  if (!mapped) {
    throw new RequestMalformedError('status is not a known task state.');
  }
  return mapped;
}

export function toA2AMessage(message: MessageRecord): Message {
  return {
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role === 'user' ? Role.ROLE_USER : Role.ROLE_AGENT,
    parts: message.parts.map((part) => Part.fromJSON(part)),
    metadata: message.metadata ?? undefined,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds,
  };
}

function toA2AArtifact(artifact: ArtifactRecord): Artifact {
  return {
    artifactId: artifact.artifactId,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map((part) => Part.fromJSON(part)),
    metadata: artifact.metadata ?? undefined,
    extensions: [],
  };
}

export function toA2ATask(task: TaskRecord): Task {
  return {
    id: task.id,
    contextId: task.contextId,
    status: {
      state: TO_A2A[task.state],
      message: task.statusMessage ? toA2AMessage(task.statusMessage) : undefined,
      timestamp: task.statusTimestamp.toISOString(),
    },
    artifacts: (task.artifacts ?? []).map(toA2AArtifact),
    history: task.history.map(toA2AMessage),
    metadata: task.metadata ?? undefined,
  };
}

/**
 * A ledger event as a stream update, or null for events a stream does not show (a
 * requester's own message that changed nothing; it is in the task's history). An
 * agent message travels as the status message of a status update, as A2A does.
 */
export function toStreamResponse(
  task: { id: string; contextId: string },
  event: TaskEventRecord,
): StreamResponse | null {
  const ids = { taskId: task.id, contextId: task.contextId, metadata: undefined };
  if (event.kind === 'artifact' && event.artifact) {
    const { append, lastChunk, ...artifact } = event.artifact;
    return {
      payload: { $case: 'artifactUpdate', value: { ...ids, artifact: toA2AArtifact(artifact), append, lastChunk } },
    };
  }
  if (event.kind !== 'status') {
    return null;
  }
  const message = event.message?.role === 'agent' ? toA2AMessage(event.message) : undefined;
  return {
    payload: {
      $case: 'statusUpdate',
      value: { ...ids, status: { state: TO_A2A[event.state], message, timestamp: event.createdAt.toISOString() } },
    },
  };
}

/**
 * The requester's message, checked (docs/api.md §5, §10) and in the stored form. The
 * types are checked here, at the request handler every binding calls, and each part's
 * contents by the ledger's own `parsePart` (on the part's v1.0 JSON form), as strictly
 * as the REST reply checks them: a number where text belongs is refused, not stored.
 */
export function fromA2AMessage(message: Message | undefined): NewMessage {
  if (!message) {
    throw new RequestMalformedError('params.message is required.');
  }
  if (typeof message.messageId !== 'string' || !message.messageId) {
    throw new RequestMalformedError('message.messageId is required (a string).');
  }
  if (message.messageId.length > 200) {
    throw new RequestMalformedError('message.messageId has at most 200 characters.');
  }
  if (message.role !== Role.ROLE_USER) {
    throw new RequestMalformedError("A requester's message has the role user.");
  }
  for (const member of ['taskId', 'contextId'] as const) {
    if (message[member] != null && typeof message[member] !== 'string') {
      throw new RequestMalformedError(`message.${member} must be a string.`);
    }
  }
  const parts: unknown[] = message.parts ?? [];
  if (!Array.isArray(parts) || parts.length < 1 || parts.length > MAX_MESSAGE_PARTS) {
    throw new RequestMalformedError(`message.parts must have 1 to ${MAX_MESSAGE_PARTS} parts.`);
  }
  const errors: FieldError[] = [];
  const stored = (parts as Array<Part | null>).map((part, i) => {
    const field = `message.parts[${i}]`;
    if (!isObject(part) || !part.content) {
      errors.push({ field, message: `${field} has no content (text, raw, url or data).` });
      return null;
    }
    return parsePart(Part.toJSON(part), field, errors);
  });
  if (message.metadata != null && !isObject(message.metadata)) {
    errors.push({ field: 'message.metadata', message: 'message.metadata must be an object' });
  }
  const extensions = stringList(message.extensions, 'message.extensions', errors);
  const referenceTaskIds = stringList(message.referenceTaskIds, 'message.referenceTaskIds', errors);
  if (errors.length > 0) {
    throw new RequestMalformedError(errors.map((e) => e.message).join('; '));
  }
  return {
    messageId: message.messageId,
    parts: stored as StoredPart[],
    metadata: message.metadata ?? null,
    extensions,
    referenceTaskIds,
  };
}

function stringList(value: unknown, field: string, errors: FieldError[]): string[] {
  if (value == null) {
    return [];
  }
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    return value;
  }
  errors.push({ field, message: `${field} must be an array of strings` });
  return [];
}

export function fromA2APushConfig(config: TaskPushNotificationConfig): PushConfigInput {
  if (!isObject(config)) {
    throw new RequestMalformedError('The push notification config must be an object.');
  }
  if (!config.url || typeof config.url !== 'string') {
    throw new RequestMalformedError('The push notification config needs a url (a string).');
  }
  for (const member of ['id', 'token'] as const) {
    if (config[member] != null && typeof config[member] !== 'string') {
      throw new RequestMalformedError(`The push notification config's ${member} must be a string.`);
    }
  }
  const authentication: unknown = config.authentication;
  if (
    authentication != null &&
    (!isObject(authentication) ||
      typeof (authentication.scheme ?? '') !== 'string' ||
      typeof (authentication.credentials ?? '') !== 'string')
  ) {
    throw new RequestMalformedError(
      "The push notification config's authentication must be an object with a scheme and credentials (strings).",
    );
  }
  return {
    id: config.id ?? '',
    url: config.url,
    token: config.token ?? '',
    authentication: config.authentication?.scheme
      ? { scheme: config.authentication.scheme, credentials: config.authentication.credentials ?? '' }
      : null,
  };
}

/**
 * A config as reads show it: without its secrets (the token and the authentication's
 * credentials; the scheme stays). Only the response that set them carries them.
 */
export function withoutSecrets(record: PushConfigRecord): PushConfigRecord {
  return {
    ...record,
    token: '',
    authentication: record.authentication ? { scheme: record.authentication.scheme, credentials: '' } : null,
  };
}

export function toA2APushConfig(record: PushConfigRecord): TaskPushNotificationConfig {
  return {
    tenant: '',
    id: record.id,
    taskId: record.taskId,
    url: record.url,
    token: record.token,
    authentication: record.authentication ?? undefined,
  };
}
