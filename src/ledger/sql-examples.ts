import { DummyValue } from '../database/generate-sql';
import type { ArtifactChunk } from './entities/task-event.entity';
import type { MessageRecord, NewMessage, NewTaskTree, TaskHead, TaskPair } from './task-records';

/** The ledger repositories' example arguments, with which @GenerateSql writes out their statements (src/database/queries). */

export const U = DummyValue.UUID;

export const U2 = DummyValue.UUID_2;

/** A new task whose message references a task (a child, if that task qualifies), and one that references none: a root. */
export const TREE: NewTaskTree = { refs: [U], maxDepth: 16 };
export const ROOT: NewTaskTree = { refs: [], maxDepth: 16 };

export const PAIR: TaskPair = {
  requester: { id: U, handle: DummyValue.HANDLE, organizationId: U },
  worker: { id: U2, handle: DummyValue.HANDLE, organizationId: U2 },
};

export const EXAMPLE_TASK: TaskHead = {
  id: U,
  contextId: U,
  ...PAIR,
  state: 'submitted',
  statusMessageId: U,
  statusTimestamp: DummyValue.DATE,
  metadata: null,
  skill: null,
  held: false,
  seq: 1,
  createdAt: DummyValue.DATE,
  updatedAt: DummyValue.DATE,
};

export const EXAMPLE_MESSAGE: NewMessage = {
  messageId: DummyValue.STRING,
  parts: [{ text: 'hello' }],
  metadata: null,
  extensions: [],
  referenceTaskIds: [],
};

export const EXAMPLE_FIRST_MESSAGE: MessageRecord = {
  ...EXAMPLE_MESSAGE,
  rowId: U2,
  taskId: U,
  contextId: U,
  role: 'user',
  seq: 1,
  createdAt: DummyValue.DATE,
};

export const EXAMPLE_CHUNK: ArtifactChunk = {
  artifactId: DummyValue.STRING,
  name: 'result',
  description: '',
  parts: [{ text: 'out' }],
  metadata: null,
  append: false,
  lastChunk: true,
};
