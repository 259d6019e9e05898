import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { notVisible, requireAccess, sideOf, visibleWhere, type Resource } from '../auth/access';
import type { ConsolePrincipal, KeyPrincipal, Principal } from '../auth/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, type FieldError } from '../common/app-error';
import { creationPosition, decodeCursor, keysetAfter, pageLimit, pageOf, type PageQuery } from '../common/pagination';
import type { ArtifactChunk } from './entities/task-event.entity';
import type { HistoryQuery, ListContextsQuery, ListTasksQuery } from './dto/list-tasks.query';
import type { ReplyDto } from './dto/reply.dto';
import { listHistory, taskHistory } from './history-limits';
import { IdempotencyStore } from './idempotency';
import { toContextView, toMessageView, toTaskView, type ContextRecord, type ContextView, type MessageView, type TaskView } from './ledger-views';
import { LedgerService } from './ledger.service';
import { parsePart, type StoredPart } from './parts';
import { TaskJournal, type NewMessage } from './task-journal';
import { hydrateTasks, participantsOf, readMessages, TASK_COLUMNS, type ParticipantRow, type TaskRow } from './task-records';
import { transition } from './task-state';

type LedgerPrincipal = KeyPrincipal | ConsolePrincipal;

const CONTEXT_COLUMNS = `c.id, c.requester_identity_id, c.requester_handle, c.requester_organization_id,
  c.worker_identity_id, c.worker_handle, c.worker_organization_id, c.created_at, c.updated_at`;

interface ContextRow extends ParticipantRow {
  id: string;
  created_at: Date;
  updated_at: Date;
}

/** How many of a context's tasks its detail view lists (the rest: GET /api/v1/tasks?context_id=). */
const CONTEXT_TASKS_SHOWN = 200;

/**
 * The REST side of the ledger (CONTRACT §7): reads for both participants and the
 * worker's reply. Who sees what is decided by src/auth/access.ts; a task the caller
 * may not see is "not found", never "forbidden".
 */
@Injectable()
export class TasksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(principal: LedgerPrincipal, query: ListTasksQuery): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
    const limit = pageLimit(query);
    const params: unknown[] = [];
    const where = [visibleWhere('t', sideOf(principal), query, params)];
    if (query.state) where.push(`t.state = $${params.push(query.state)}`);
    if (query.context_id) where.push(`t.context_id = $${params.push(query.context_id)}::uuid`);
    if (query.updated_after) where.push(`t.updated_at > $${params.push(query.updated_after)}::timestamptz`);
    where.push(...keysetAfter('t', decodeCursor(query.cursor), params));
    const rows = (await this.dataSource.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit + 1}`,
      params,
    )) as TaskRow[];
    const page = pageOf(rows, limit, creationPosition);
    const tasks = await hydrateTasks(this.dataSource.manager, page.items, {
      historyLength: listHistory(query.history_length, limit, this.config.ledgerMaxHistory), artifacts: query.include_artifacts ?? false,
      maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask,
    });
    return { tasks: tasks.map(toTaskView), next_cursor: page.nextCursor };
  }

  async get(principal: LedgerPrincipal, id: string, query: HistoryQuery): Promise<TaskView> {
    return toTaskView(await this.visibleTask(this.dataSource.manager, principal, id, taskHistory(query.history_length, this.config.ledgerMaxHistory)));
  }

  /** A task's messages, newest first. */
  async messages(principal: LedgerPrincipal, id: string, query: PageQuery): Promise<{ messages: MessageView[]; next_cursor: string | null }> {
    const task = await this.visibleTask(this.dataSource.manager, principal, id, 0, false);
    const limit = pageLimit(query);
    const cursor = decodeCursor(query.cursor);
    // The cursor names the last message shown; the next page continues below its place in the history.
    const params: unknown[] = [task.id];
    const where = ['m.task_id = $1'];
    if (cursor) where.push(`m.seq < (SELECT seq FROM messages WHERE task_id = $1 AND id = $${params.push(cursor.id)}::uuid)`);
    const rows = await readMessages(this.dataSource.manager, where.join(' AND '), params, `ORDER BY m.seq DESC LIMIT ${limit + 1}`);
    const page = pageOf(rows, limit, (m) => ({ at: m.createdAt.toISOString(), id: m.rowId }));
    return { messages: page.items.map(toMessageView), next_cursor: page.nextCursor };
  }

  async listContexts(principal: LedgerPrincipal, query: ListContextsQuery): Promise<{ contexts: ContextView[]; next_cursor: string | null }> {
    const limit = pageLimit(query);
    const params: unknown[] = [];
    const where = [visibleWhere('c', sideOf(principal), query, params), ...keysetAfter('c', decodeCursor(query.cursor), params)];
    const rows = (await this.dataSource.query(
      `SELECT ${CONTEXT_COLUMNS} FROM contexts c WHERE ${where.join(' AND ')} ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit + 1}`,
      params,
    )) as ContextRow[];
    const page = pageOf(rows, limit, creationPosition);
    return { contexts: page.items.map((row) => toContextView(contextRecord(row))), next_cursor: page.nextCursor };
  }

  /** A context with its most recent tasks (without history or artifacts). */
  async getContext(principal: LedgerPrincipal, id: string): Promise<ContextView & { tasks: TaskView[] }> {
    const params: unknown[] = [id];
    const [row] = (await this.dataSource.query(
      `SELECT ${CONTEXT_COLUMNS} FROM contexts c WHERE c.id = $1 AND ${visibleWhere('c', sideOf(principal), {}, params)}`, params,
    )) as ContextRow[];
    if (!row) throw notVisible('context.read');
    const taskRows = (await this.dataSource.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.context_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT ${CONTEXT_TASKS_SHOWN}`, [id],
    )) as TaskRow[];
    const tasks = await hydrateTasks(this.dataSource.manager, taskRows, { historyLength: 0, artifacts: false });
    return { ...toContextView(contextRecord(row)), tasks: tasks.map(toTaskView) };
  }

  /**
   * The worker's reply: a new state, a message, artifacts — applied together, in one
   * transaction, under the task's row lock, after the state machine agrees. With an
   * Idempotency-Key, a repeat of the same request replays the first response.
   */
  async reply(principal: LedgerPrincipal, id: string, dto: ReplyDto, idempotencyKey: string | undefined): Promise<TaskView> {
    const message = dto.message ? this.newMessage(dto.message) : null;
    const artifacts = (dto.artifacts ?? []).map((artifact, i) => this.chunk(artifact, i));
    if (!dto.state && !message && artifacts.length === 0) {
      throw badRequest('validation_failed', 'A reply needs at least one of state, message or artifacts.', [
        { field: 'state', message: 'state, message or artifacts is required' },
      ]);
    }
    return this.ledger.write(async (em, save) => {
      const scope = `task_reply:${principal.kind}:${principal.id}`;
      if (idempotencyKey) {
        const claim = await this.idempotency.claim(em, scope, idempotencyKey, IdempotencyStore.hash(`reply ${id}`, dto));
        if (claim.replay) return claim.replay.body as TaskView;
      }
      const journal = await this.lockForWorker(em, principal, id);
      const next = transition(journal.state, { by: 'worker', action: 'reply', to: dto.state ?? null });
      if (!next.ok && next.reason === 'terminal') throw conflict('task_terminal', `The task is ${journal.state}; it takes no more replies.`);
      if (!next.ok) throw conflict('invalid_transition', `A worker cannot move a task from ${journal.state} to ${dto.state}.`);
      if (message) await journal.requireRoomForMessage(this.config.ledgerMaxMessagesPerTask);
      for (const chunk of artifacts) await journal.artifact(chunk, this.config.ledgerMaxArtifactBytesPerTask);
      if (message) await journal.message('agent', message, 'status', next.state);
      else if (dto.state) await journal.status(next.state);
      await save(journal);
      const result = toTaskView(await this.visibleTask(em, principal, id, this.config.ledgerMaxHistory));
      if (idempotencyKey) await this.idempotency.record(em, scope, idempotencyKey, 200, result);
      return result;
    });
  }

  private async visibleTask(em: EntityManager, principal: Principal, id: string, historyLength: number, artifacts = true) {
    const params: unknown[] = [id];
    const rows = (await em.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = $1 AND ${visibleWhere('t', sideOf(principal), {}, params)}`, params,
    )) as TaskRow[];
    const [task] = await hydrateTasks(em, rows, { historyLength, artifacts, maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask });
    if (!task) throw notVisible('task.read');
    return task;
  }

  /** Locks the task for a reply: invisible → 404; visible from the requester's side only → 403. */
  private async lockForWorker(em: EntityManager, principal: Principal, id: string): Promise<TaskJournal> {
    const journal = await TaskJournal.lock(em, 't.id = $1', [id]);
    requireAccess(principal, 'task.reply', journal ? parties(journal.task) : null);
    return journal!;
  }


  private newMessage(dto: NonNullable<ReplyDto['message']>): NewMessage {
    return { messageId: randomUUID(), parts: parts(dto.parts, 'message.parts'), metadata: dto.metadata ?? null, extensions: [], referenceTaskIds: [] };
  }

  private chunk(dto: NonNullable<ReplyDto['artifacts']>[number], index: number): ArtifactChunk {
    return {
      artifactId: dto.artifactId ?? randomUUID(),
      name: dto.name ?? '',
      description: dto.description ?? '',
      parts: parts(dto.parts, `artifacts[${index}].parts`),
      metadata: dto.metadata ?? null,
      append: dto.append ?? false,
      lastChunk: dto.lastChunk ?? false,
    };
  }
}

function parts(input: unknown[], field: string): StoredPart[] {
  const errors: FieldError[] = [];
  const parsed = input.map((part, i) => parsePart(part, `${field}[${i}]`, errors));
  if (errors.length > 0) throw badRequest('validation_failed', errors.map((e) => e.message).join('; '), errors);
  return parsed as StoredPart[];
}

/** A task's participants as the access rules see them. */
function parties(row: ParticipantRow): Resource {
  return {
    requester: { organizationId: row.requester_organization_id, identityId: row.requester_identity_id },
    worker: { organizationId: row.worker_organization_id, identityId: row.worker_identity_id },
  };
}

function contextRecord(row: ContextRow): ContextRecord {
  return {
    id: row.id,
    ...participantsOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
