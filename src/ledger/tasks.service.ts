import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { canAccess, notVisible, partyOf, sideOf } from '../auth/access';
import type { ConsolePrincipal, KeyPrincipal, Principal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, type FieldError } from '../common/app-error';
import { failureOf } from '../database/errors';
import { CURRENCY_MISMATCH, UsageMeter } from '../usage/usage-meter';
import type { ReportedUsage } from '../usage/usage.repository';
import { keyset, recordCreationPosition, type PageQuery } from '../common/pagination';
import { AtCommit } from '../database/database';
import type { ArtifactChunk } from './entities/task-event.entity';
import type { HistoryQuery, ListContextsQuery, ListTasksQuery } from './dto/list-tasks.query';
import type { ReplyDto, ReplyUsageDto } from './dto/reply.dto';
import { listHistory, taskHistory } from './history-limits';
import { IdempotencyStore } from './idempotency';
import {
  toContextView,
  toMessageView,
  toTaskView,
  type ContextView,
  type MessageView,
  type TaskView,
} from './ledger.view';
import { MESSAGES_NEWEST_FIRST, TaskReadsRepository } from './task-reads.repository';
import { LedgerService } from './ledger.service';
import { parsePart, type StoredPart } from './parts';
import type { RememberedTask } from './remembered-tasks';
import { checkReply } from './reply-check';
import type { HydrateOptions, NewMessage, TaskRecord } from './task-records';

type LedgerPrincipal = KeyPrincipal | ConsolePrincipal;

/** How many of a context's tasks its detail view lists (the rest: GET /api/v1/tasks?context_id=). */
const CONTEXT_TASKS_SHOWN = 200;

/**
 * The REST side of the ledger (docs/api.md §7): reads for both participants and the
 * worker's reply. Who sees what is decided by src/auth/access.ts; a task the caller
 * may not see is "not found", never "forbidden".
 */
@Injectable()
export class TasksService {
  constructor(
    private readonly repository: TaskReadsRepository,
    private readonly ledger: LedgerService,
    private readonly idempotency: IdempotencyStore,
    private readonly usage: UsageMeter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(
    principal: LedgerPrincipal,
    query: ListTasksQuery,
  ): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
    const page = keyset('t', query);
    const rows = await this.repository.visibleTasks(
      sideOf(principal),
      {
        role: query.role,
        identity: query.identity,
        peer: query.peer,
        state: query.state,
        contextId: query.context_id,
        skill: query.skill,
        updatedAfter: query.updated_after,
      },
      page,
    );
    const { items, nextCursor } = page.cut(rows, recordCreationPosition);
    const tasks = await this.repository.hydrate(items, {
      historyLength: listHistory(query.history_length, page.limit, this.config.ledgerMaxHistory),
      artifacts: query.include_artifacts ?? false,
      maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask,
    });
    return { ...(await this.views(principal, tasks)), next_cursor: nextCursor };
  }

  async get(principal: LedgerPrincipal, id: string, query: HistoryQuery): Promise<TaskView> {
    const task = await this.visibleTask(principal, id, taskHistory(query.history_length, this.config.ledgerMaxHistory));
    return (await this.views(principal, [task])).tasks[0];
  }

  /**
   * Task views; a forwarded task's upstream ids shown to the worker's side only
   * (`task.readUpstream`), read for those tasks alone (no read when the caller is on
   * the worker's side of none).
   */
  private async views(principal: LedgerPrincipal, tasks: TaskRecord[]): Promise<{ tasks: TaskView[] }> {
    const workerSide = tasks
      .filter((task) => canAccess(principal, 'task.readUpstream', { worker: partyOf(task.worker) }))
      .map((task) => task.id);
    const upstream = await this.repository.upstreamIds(workerSide);
    return { tasks: tasks.map((task) => toTaskView(task, upstream.get(task.id))) };
  }

  /** A task's messages, newest first. */
  async messages(
    principal: LedgerPrincipal,
    id: string,
    query: PageQuery,
  ): Promise<{ messages: MessageView[]; next_cursor: string | null }> {
    const task = await this.visibleTask(principal, id, 0, false);
    const page = keyset('m', query, MESSAGES_NEWEST_FIRST);
    const { items, nextCursor } = page.cut(await this.repository.messagePage(task, page), (m) => ({
      at: m.createdAt.toISOString(),
      id: m.rowId,
    }));
    return { messages: items.map(toMessageView), next_cursor: nextCursor };
  }

  async listContexts(
    principal: LedgerPrincipal,
    query: ListContextsQuery,
  ): Promise<{ contexts: ContextView[]; next_cursor: string | null }> {
    const page = keyset('c', query);
    const records = await this.repository.visibleContexts(
      sideOf(principal),
      { role: query.role, identity: query.identity, peer: query.peer },
      page,
    );
    const { items, nextCursor } = page.cut(records, recordCreationPosition);
    return { contexts: items.map(toContextView), next_cursor: nextCursor };
  }

  /** A context with its most recent tasks the caller may see (without history or artifacts). */
  async getContext(principal: LedgerPrincipal, id: string): Promise<ContextView & { tasks: TaskView[] }> {
    const side = sideOf(principal);
    const context = await this.repository.visibleContext(id, side);
    if (!context) {
      throw notVisible('context.read');
    }
    const rows = await this.repository.contextTasks(id, side, CONTEXT_TASKS_SHOWN);
    const tasks = await this.repository.hydrate(rows, { historyLength: 0, artifacts: false });
    return { ...toContextView(context), ...(await this.views(principal, tasks)) };
  }

  /**
   * The worker's reply: a new state, a message, artifacts — applied together, in one
   * transaction, under the task's row lock, after the state machine agrees. With an
   * Idempotency-Key, a repeat of the same request replays the first response.
   */
  async reply(
    principal: LedgerPrincipal,
    id: string,
    dto: ReplyDto,
    idempotencyKey: string | undefined,
  ): Promise<TaskView> {
    const message = dto.message ? this.newMessage(dto.message) : null;
    const artifacts = (dto.artifacts ?? []).map((artifact, i) => this.chunk(artifact, i));
    const usage = dto.usage ? reportedUsage(dto.usage) : null;
    if (!dto.state && !message && artifacts.length === 0 && !usage) {
      throw badRequest('validation_failed', 'A reply needs at least one of state, message, artifacts or usage.', [
        { field: 'state', message: 'state, message, artifacts or usage is required' },
      ]);
    }
    const max = this.config.ledgerMaxMessagesPerTask;
    const room = message ? { role: 'agent' as const, messageIds: [message.messageId], max } : undefined;
    const to = dto.state ?? null;
    // Without reading the task first when this instance remembers it and the reply is
    // allowed by what it remembers (LedgerService.writeTask); not when the answer is kept
    // for a repeat, nor with artifacts (their sizes are read under the lock anyway).
    const mayUseRemembered = (task: RememberedTask) =>
      !idempotencyKey &&
      artifacts.length === 0 &&
      (!message || task.messages! < max) &&
      checkReply(principal, { row: task.row, state: task.row.state }, to).ok;
    const outcome = await refusingMixedCurrencies(
      this.ledger.writeTask(
        id,
        room,
        mayUseRemembered,
        async (tx, lock): Promise<{ view: TaskView } | { later: Promise<TaskRecord[]> }> => {
          const scope = `task_reply:${principal.kind}:${principal.id}`;
          if (idempotencyKey) {
            const claim = await this.idempotency.claim(
              tx,
              scope,
              idempotencyKey,
              IdempotencyStore.hash(`reply ${id}`, dto),
            );
            if (claim.replay) {
              return { view: claim.replay.body as TaskView };
            }
          }
          // Invisible → 404; visible from the requester's side only → 403.
          const found = await lock();
          const next = checkReply(principal, found && { row: found.task, state: found.state }, to);
          if (!next.ok) {
            throw next.error;
          }
          const journal = found!;
          if (message) {
            (await journal.messageRoom('agent', message.messageId, max)).requireRoom();
          }
          for (const chunk of artifacts) {
            await journal.artifact(chunk, this.config.ledgerMaxArtifactBytesPerTask);
          }
          if (message) {
            await journal.message('agent', message, 'status', next.state);
          } else if (dto.state) {
            await journal.status(next.state);
          }
          if (usage) {
            const { id, requester } = journal.task;
            await journal.alongside((unit) => this.usage.report(unit, { id, requester }, usage, 'refuse'));
          }
          // The reply answers with the task as it leaves it: flushed now, its messages and
          // artifacts read after the writes — with COMMIT, in the same round trip, unless the
          // answer is to be kept for a repeat of the request.
          await journal.flush();
          const hydration = this.hydration(this.config.ledgerMaxHistory, true);
          if (!idempotencyKey) {
            const later = this.repository.hydrate([journal.task], hydration, new AtCommit(tx));
            later.catch(() => undefined); // a rollback fails the reply itself; this read is then never awaited
            return { later };
          }
          const [task] = await this.repository.hydrate([journal.task], hydration, tx);
          const view = toTaskView(task);
          await this.idempotency.record(tx, scope, idempotencyKey, 200, view);
          return { view };
        },
      ),
    );
    return 'view' in outcome ? outcome.view : toTaskView((await outcome.later)[0]);
  }

  private async visibleTask(principal: Principal, id: string, historyLength: number, artifacts = true) {
    const task = await this.repository.visibleTaskRecord(
      id,
      sideOf(principal),
      this.hydration(historyLength, artifacts),
    );
    if (!task) {
      throw notVisible('task.read');
    }
    return task;
  }

  private hydration(historyLength: number, artifacts: boolean): HydrateOptions {
    return { historyLength, artifacts, maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask };
  }

  private newMessage(dto: NonNullable<ReplyDto['message']>): NewMessage {
    return {
      messageId: randomUUID(),
      parts: parts(dto.parts, 'message.parts'),
      metadata: dto.metadata ?? null,
      extensions: [],
      referenceTaskIds: [],
    };
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

/** A reply's usage member as a report (absent counts: 0). */
function reportedUsage(dto: ReplyUsageDto): ReportedUsage {
  return { inputTokens: dto.input_tokens ?? 0, outputTokens: dto.output_tokens ?? 0, cost: dto.cost ?? null };
}

/** A reply whose cost is in another currency than the task's earlier reports: 409 (SQLSTATE UCURR). */
async function refusingMixedCurrencies<T>(reply: Promise<T>): Promise<T> {
  try {
    return await reply;
  } catch (error) {
    const failure = failureOf(error, CURRENCY_MISMATCH);
    throw failure ? conflict('usage_currency_mismatch', `${failure.message}.`) : error;
  }
}

function parts(input: unknown[], field: string): StoredPart[] {
  const errors: FieldError[] = [];
  const parsed = input.map((part, i) => parsePart(part, `${field}[${i}]`, errors));
  if (errors.length > 0) {
    throw badRequest('validation_failed', errors.map((e) => e.message).join('; '), errors);
  }
  return parsed as StoredPart[];
}
