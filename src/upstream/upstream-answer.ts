import { randomUUID } from 'node:crypto';
import {
  Part,
  Role,
  TaskState as A2AState,
  type Artifact,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { AppError } from '../common/app-error';
import { bodyProblem, MAX_JSON_DEPTH, unknownBodyProblem } from '../common/body-problem';
import type { ArtifactChunk } from '../ledger/entities/task-event.entity';
import type { UpstreamUpdate } from '../ledger/forwarded-tasks.service';
import { MAX_ARTIFACTS_PER_REPLY, MAX_MESSAGE_PARTS, type StoredPart } from '../ledger/parts';
import type { NewMessage } from '../ledger/task-records';
/** The forwarder's failures are status messages of the service's own words, as the ledger writes them. */
export { agentText } from '../ledger/task-records';
import { isSettled, isTerminal, type ReplyState } from '../ledger/task-state';
import { usageInMetadata } from '../usage/reported-usage';

/**
 * What an upstream agent answers, read into the ledger's updates (UpstreamUpdate) under
 * the limits a worker's REST reply has (docs/api.md, "Upstream agents"): at most
 * MAX_ARTIFACTS_PER_REPLY artifacts and MAX_MESSAGE_PARTS parts per message or artifact
 * in one answer (one result, one stream event), at most the REST body limit in bytes,
 * JSON nested at most MAX_JSON_DEPTH levels, no NUL character. An answer past them is
 * refused (AnswerRefused), and the forward fails with the task, naming the limit.
 */

/** The upstream's answer breaks a limit: the reason, in words fit for a task's status message. */
export class AnswerRefused extends Error {}

/**
 * The upstream accepted the message (it answered with a 2xx status) but gave nothing to
 * follow its task by: the message is not sent again, and the forward ends. The reason, in
 * words fit for a task's status message.
 */
export class NotSentAgain extends Error {}

/** The ledger refusals of an answer that no retry can change (the task's own limits). */
const LEDGER_REFUSALS = new Set(['task_artifact_limit', 'task_message_limit', 'artifact_not_found', 'artifact_closed']);

/** A ledger error refusing what the upstream answered, as an AnswerRefused; anything else as it is. */
export function refusalOf(error: unknown): unknown {
  if (!(error instanceof AppError) || !LEDGER_REFUSALS.has(error.code)) {
    return error;
  }
  const first = error.detail.split(';')[0].replace(/\.$/, '');
  return new AnswerRefused(first.charAt(0).toLowerCase() + first.slice(1));
}

const FROM_A2A: Partial<Record<A2AState, ReplyState>> = {
  [A2AState.TASK_STATE_WORKING]: 'working',
  [A2AState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [A2AState.TASK_STATE_AUTH_REQUIRED]: 'auth-required',
  [A2AState.TASK_STATE_COMPLETED]: 'completed',
  [A2AState.TASK_STATE_FAILED]: 'failed',
  [A2AState.TASK_STATE_REJECTED]: 'rejected',
};

const TERMINAL_A2A = new Set([
  A2AState.TASK_STATE_COMPLETED,
  A2AState.TASK_STATE_FAILED,
  A2AState.TASK_STATE_REJECTED,
  A2AState.TASK_STATE_CANCELED,
]);

/**
 * How often a status message that grows under one messageId (VoltAgent streams an
 * answer's text so, in Task snapshots) is recorded again while the task works: each
 * version is a message of its own, so the requester sees the text grow without the
 * task's messages growing with every token. The version the task settles with is
 * always recorded.
 */
const GROWTH_INTERVAL_MS = 1_000;

export function isSettledA2A(state: A2AState | undefined): boolean {
  const mapped = state === undefined ? undefined : FROM_A2A[state];
  return state === A2AState.TASK_STATE_CANCELED || (mapped !== undefined && isSettled(mapped));
}

/**
 * Reads one forward's answers. It remembers the artifacts it has handed on, so that a
 * Task snapshot (a stream's Task event after the first, or a task read again while
 * polling) repeats none of them: a snapshot is applied like the events it summarizes —
 * its state, its status message, the agent messages of its history and the artifacts
 * that changed — and what earlier events recorded is not recorded twice.
 */
export class AnswerReader {
  private first = true;
  /** What each artifact holds as this reader handed it on: its parts, as JSON. */
  private readonly artifacts = new Map<string, StoredPart[]>();
  /** Each status message handed on, by its messageId: its parts as JSON, its versions, when the last was handed on. */
  private readonly said = new Map<string, { parts: string; versions: number; at: number }>();

  /** `maxBytes`: the most one answer may hold (the REST body limit). */
  constructor(private readonly maxBytes: number) {}

  /** A non-streaming send's result: a message completes the task; a task is read as it is. */
  result(result: Message | Task): UpstreamUpdate {
    this.first = false;
    return 'kind' in result || !('status' in result)
      ? this.checked(withUsage(messageUpdate(result as Message), (result as Message).metadata))
      : this.checked(this.snapshot(result as Task));
  }

  /** A task read (GetTask) while following it. */
  task(task: Task): UpstreamUpdate {
    this.first = false;
    return this.checked(this.snapshot(task));
  }

  /** One event of a stream. */
  event(event: StreamResponse): UpstreamUpdate | null {
    const first = this.first;
    this.first = false;
    const payload = event.payload;
    switch (payload?.$case) {
      case 'task': {
        // A stream's first event shows the task as it was before this turn (its ids are what
        // counts), unless it is over already; any later Task is a snapshot of the task now.
        const task = payload.value;
        if (first && !TERMINAL_A2A.has(task.status?.state ?? A2AState.TASK_STATE_UNSPECIFIED)) {
          return { upstream: idsOf(task.id, task.contextId) };
        }
        return this.checked(this.snapshot(task));
      }
      case 'message':
        return this.checked(withUsage(messageUpdate(payload.value), payload.value.metadata));
      case 'statusUpdate': {
        const { status } = payload.value;
        const state = status?.state === undefined ? undefined : FROM_A2A[status.state];
        const update = {
          upstream: idsOf(payload.value.taskId, payload.value.contextId),
          state,
          message: this.status(status?.message, state),
        };
        return this.checked(withUsage(update, payload.value.metadata, status?.message?.metadata));
      }
      case 'artifactUpdate': {
        const { artifact, append, lastChunk } = payload.value;
        if (!artifact) {
          return null;
        }
        return this.checked({
          upstream: idsOf(payload.value.taskId, payload.value.contextId),
          artifacts: [this.chunk(artifact, append, lastChunk)],
        });
      }
      default:
        return null;
    }
  }

  /** A task as the upstream shows it: its ids, state, status message, new agent messages and changed artifacts. */
  private snapshot(task: Task): UpstreamUpdate {
    const state = task.status?.state === undefined ? undefined : FROM_A2A[task.status.state];
    const statusId = task.status?.message?.messageId;
    const message = this.status(task.status?.message, state);
    const history = (task.history ?? [])
      .filter((entry) => entry.role === Role.ROLE_AGENT && entry.parts.length > 0 && entry.messageId !== statusId)
      .map(toNewMessage);
    // An artifact without an id is known by its place in the task (the same in every snapshot).
    const artifacts = (task.artifacts ?? [])
      .map((artifact, i) => (artifact.artifactId ? artifact : { ...artifact, artifactId: `artifact-${i + 1}` }))
      .filter((artifact) => !this.holds(artifact))
      .map((artifact) => this.chunk(artifact, false, false));
    const update = {
      upstream: idsOf(task.id, task.contextId),
      state,
      message,
      ...(history.length > 0 ? { history } : {}),
      artifacts,
    };
    return withUsage(update, task.metadata, task.status?.message?.metadata);
  }

  /**
   * A status message to hand on: as it is the first time, and when it is repeated
   * unchanged while the task works (the ledger stores a messageId once); changed under
   * the same messageId, or repeated with a state that settles the task, a new version of
   * it (`<messageId>.<n>`) — while the task works, at most one each GROWTH_INTERVAL_MS
   * (none in between).
   */
  private status(message: Message | undefined, state: ReplyState | undefined): NewMessage | undefined {
    const mapped = statusMessage(message);
    if (!mapped) {
      return undefined;
    }
    const parts = JSON.stringify(mapped.parts);
    const now = Date.now();
    const said = this.said.get(mapped.messageId);
    if (!said) {
      this.said.set(mapped.messageId, { parts, versions: 1, at: now });
      return mapped;
    }
    const working = state === undefined || state === 'working';
    // Unchanged while working: nothing new. A state that settles the task takes its message
    // as a version of its own (a message the task holds already would leave it without one).
    if (said.parts === parts && working) {
      return said.versions === 1 ? mapped : undefined;
    }
    if (working && now - said.at < GROWTH_INTERVAL_MS) {
      return undefined;
    }
    said.versions += 1;
    said.parts = parts;
    said.at = now;
    return { ...mapped, messageId: `${mapped.messageId}.${said.versions}` };
  }

  /** Whether this artifact, as the snapshot shows it, is what was handed on already. */
  private holds(artifact: Artifact): boolean {
    const held = artifact.artifactId ? this.artifacts.get(artifact.artifactId) : undefined;
    return held !== undefined && JSON.stringify(held) === JSON.stringify(partsOf(artifact.parts));
  }

  private chunk(artifact: Artifact, append: boolean, lastChunk: boolean): ArtifactChunk {
    const chunk = toChunk(artifact, append, lastChunk);
    const before = append ? (this.artifacts.get(chunk.artifactId) ?? []) : [];
    this.artifacts.set(chunk.artifactId, [...before, ...chunk.parts]);
    return chunk;
  }

  /** The update, if it keeps the limits of a REST reply; else AnswerRefused naming the limit. */
  private checked(update: UpstreamUpdate): UpstreamUpdate {
    const artifacts = update.artifacts ?? [];
    if (artifacts.length > MAX_ARTIFACTS_PER_REPLY) {
      throw new AnswerRefused(
        `it holds ${artifacts.length} artifacts, more than the ${MAX_ARTIFACTS_PER_REPLY} an answer may hold`,
      );
    }
    for (const message of [...(update.message ? [update.message] : []), ...(update.history ?? [])]) {
      if (message.parts.length > MAX_MESSAGE_PARTS) {
        throw new AnswerRefused(
          `a message holds ${message.parts.length} parts, more than the ${MAX_MESSAGE_PARTS} it may hold`,
        );
      }
    }
    for (const artifact of artifacts) {
      if (artifact.parts.length > MAX_MESSAGE_PARTS) {
        throw new AnswerRefused(
          `an artifact holds ${artifact.parts.length} parts, more than the ${MAX_MESSAGE_PARTS} it may hold`,
        );
      }
    }
    // Depth first: a deeper answer could not even be measured safely.
    const { found: problem } = bodyProblem(update, MAX_JSON_DEPTH);
    switch (problem) {
      case null:
        break;
      case 'too_deep':
        throw new AnswerRefused(`it is nested deeper than ${MAX_JSON_DEPTH} levels`);
      case 'nul_character':
        throw new AnswerRefused('it holds a NUL character, which cannot be stored');
      case 'lone_surrogate':
        throw new AnswerRefused('it holds a lone UTF-16 surrogate, which is not text and cannot be stored');
      default:
        return unknownBodyProblem(problem);
    }
    const bytes = Buffer.byteLength(JSON.stringify(update));
    if (bytes > this.maxBytes) {
      throw new AnswerRefused(`it holds ${bytes} bytes, more than the ${this.maxBytes} an answer may hold`);
    }
    return update;
  }
}

/**
 * An update that ends the task, with the usage its answer reported (docs/api.md §18): the
 * first of `metadata` (the event's or task's, then its status message's) carrying one.
 * Only the ending answer's counts — the usage of the whole task, as agents report it
 * with their final status — so a task's usage is taken once, however often it was read.
 */
function withUsage(update: UpstreamUpdate, ...metadata: unknown[]): UpstreamUpdate {
  if (!update.state || !isTerminal(update.state)) {
    return update;
  }
  const usage = metadata.map(usageInMetadata).find((found) => found !== null);
  return usage ? { ...update, usage } : update;
}

/** The upstream's ids, when it named its task. */
function idsOf(taskId: string, contextId: string): UpstreamUpdate['upstream'] {
  return taskId ? { taskId, contextId } : undefined;
}

function statusMessage(message: Message | undefined): NewMessage | undefined {
  return message && message.parts.length > 0 ? toNewMessage(message) : undefined;
}

/** A direct answer without a task: the agent's message completes the task. */
function messageUpdate(message: Message): UpstreamUpdate {
  return { state: 'completed', message: toNewMessage(message) };
}

function partsOf(parts: Part[]): StoredPart[] {
  return parts.filter((part) => part.content).map((part) => Part.toJSON(part) as StoredPart);
}

function toNewMessage(message: Message): NewMessage {
  return {
    messageId: message.messageId || randomUUID(),
    parts: partsOf(message.parts),
    metadata: message.metadata ?? null,
    extensions: message.extensions ?? [],
    referenceTaskIds: message.referenceTaskIds ?? [],
  };
}

function toChunk(artifact: Artifact, append: boolean, lastChunk: boolean): ArtifactChunk {
  return {
    artifactId: artifact.artifactId || randomUUID(),
    name: artifact.name ?? '',
    description: artifact.description ?? '',
    parts: partsOf(artifact.parts),
    metadata: artifact.metadata ?? null,
    append,
    lastChunk,
  };
}
