import { Inject, Injectable } from '@nestjs/common';
import {
  AgentCard,
  type CancelTaskRequest,
  type DeleteTaskPushNotificationConfigRequest,
  type GetTaskPushNotificationConfigRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import { ApprovalsService } from '../approvals/approvals.service';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../common/app-error';
import { clientDataError } from '../common/problem.filter';
import { isTimestamp } from '../common/pagination';
import { LOGGER } from '../common/tokens';
import { afterCommit } from '../database/unit-of-work';
import { skillDecision } from '../admission/admission.service';
import { skillExtensionUri } from '../directory/agent-card';
import { DirectoryService } from '../directory/directory.service';
import { clampedListHistory, clampedTaskHistory } from '../ledger/history-limits';
import { LedgerService } from '../ledger/ledger.service';
import { PushConfigService } from '../ledger/push-configs.service';
import type { HydrateOptions, TaskRecord } from '../ledger/task-records';
import { isSettled, isTerminal, type TaskState } from '../ledger/task-state';
import type { TaskWatch } from '../ledger/task-watch';
import { UpstreamForwarder } from '../upstream/upstream-forwarder';
import { UpstreamsService } from '../upstream/upstreams.service';
import { a2aErrorFor } from './a2a-errors';
import {
  fromA2AMessage,
  fromA2APushConfig,
  stateFilter,
  toA2APushConfig,
  toA2ATask,
  toStreamResponse,
  withoutSecrets,
} from './a2a-mapping';
import { callOf, type ProtocolCall } from './call-context';
import { requireCallableSkill, skillNamed } from './call-skill';
import { CallRefused } from './call-standing';
import { refusingOverBudget } from './budget-refusal';
import { UsageMeter } from '../usage/usage-meter';
import type { WriteBatch } from '../database/write-batch';
import { ProtocolGate } from './protocol-gate';

/** What the SDK's v0.3 transport reads from the card: only the capabilities. */
const SERVICE_CARD = AgentCard.fromJSON({
  name: 'a2a-service',
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
});
/** ListTasks page bounds (the REST lists allow up to 200). */
const LIST_TASKS_DEFAULT_PAGE_SIZE = 50;
const LIST_TASKS_MAX_PAGE_SIZE = 100;

/**
 * The SDK's A2ARequestHandler, implemented over the ledger. The SDK's own
 * DefaultRequestHandler runs an AgentExecutor in this process and keeps its event
 * bus in memory; here the worker is another identity that answers later, through the
 * REST reply, possibly on another instance. So tasks live in the ledger, and waiting
 * (blocking sends, streams) is a TaskWatch woken by the TaskNotifier, re-reading the
 * ledger's ordered events. The SDK's JSON-RPC transport handlers (v1.0 and v0.3) call
 * this class and own the wire format.
 */
@Injectable()
export class LedgerRequestHandler implements A2ARequestHandler {
  /** Where a message names its skill: its metadata entry under this URI (docs/api.md §16). */
  private readonly skillExtension: string;

  constructor(
    private readonly gate: ProtocolGate,
    private readonly ledger: LedgerService,
    private readonly pushConfigs: PushConfigService,
    private readonly directory: DirectoryService,
    private readonly upstreams: UpstreamsService,
    private readonly forwarder: UpstreamForwarder,
    private readonly approvals: ApprovalsService,
    private readonly usage: UsageMeter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.skillExtension = skillExtensionUri(config.publicBaseUrl);
  }

  async getAgentCard(): Promise<AgentCard> {
    return SERVICE_CARD;
  }

  /**
   * The worker's extended card (docs/api.md §4): its card with the skills of visibility
   * `admitted` that the caller is admitted to (docs/api.md §16: admission for that skill
   * is no denial). Reached only through the protocol's checks (credential, worker,
   * admission), so every binding that calls this handler gets the same rule. The v1.0
   * card; the SDK's v0.3 transport translates it for `agent/getAuthenticatedExtendedCard`,
   * so a v0.3 call gets it signed over that translation (DirectoryService.extendedCard).
   */
  getAuthenticatedExtendedAgentCard(_params: unknown, context?: ServerCallContext): Promise<AgentCard> {
    return this.guard(async () => {
      // The worker as admission read it, at the version the call was admitted at: nothing to read again.
      const { version, admitted } = callOf(context!);
      const admits = (skill: string) => skillDecision(admitted, skill).allowed;
      return AgentCard.fromJSON(await this.directory.extendedCard(admitted.worker, version, admits));
    });
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.guard(async () => {
      const call = callOf(context);
      const read = { historyLength: this.history(params.configuration?.historyLength), artifacts: true };
      const { task, duplicate } = await this.send(call, params, read);
      if (!call.blocking || duplicate || isSettled(task.state)) {
        return toA2ATask(task);
      }
      return toA2ATask(await this.settle(call, task, read));
    });
  }

  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.guardStream(this.sendAndFollow(callOf(context), params));
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return this.guardStream(this.subscribe(callOf(context), params.id));
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(async () =>
      toA2ATask(
        await this.pairTask(callOf(context), params.id, {
          historyLength: this.history(params.historyLength),
          artifacts: true,
        }),
      ),
    );
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.guard(async () => {
      const pageSize = params.pageSize ?? LIST_TASKS_DEFAULT_PAGE_SIZE;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > LIST_TASKS_MAX_PAGE_SIZE) {
        throw new RequestMalformedError(`pageSize must be between 1 and ${LIST_TASKS_MAX_PAGE_SIZE}.`);
      }
      if (params.statusTimestampAfter && !isTimestamp(params.statusTimestampAfter)) {
        throw new RequestMalformedError('statusTimestampAfter is not an ISO 8601 timestamp.');
      }
      const statusAfter = params.statusTimestampAfter ? new Date(params.statusTimestampAfter) : undefined;
      const page = await this.ledger.list(
        callOf(context).pair,
        {
          contextId: params.contextId || undefined,
          state: stateFilter(params.status),
          statusAfter,
          pageSize,
          pageToken: params.pageToken || undefined,
        },
        {
          historyLength: clampedListHistory(wholeNumber(params.historyLength), pageSize, this.config.ledgerMaxHistory),
          artifacts: params.includeArtifacts ?? false,
        },
      );
      return {
        tasks: page.tasks.map(toA2ATask),
        nextPageToken: page.nextPageToken,
        pageSize,
        totalSize: page.totalSize,
      };
    });
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(async () => {
      const call = callOf(context);
      const { pair } = call;
      // Cancelling a canceled task: the task in v1.0 (idempotent, §3.3.1), -32002 in v0.3 (a final task is not cancelable).
      const repeat = call.version === '1.0' ? 'return' : 'refuse';
      const read = { historyLength: this.history(undefined), artifacts: true };
      const task = await this.ledger.cancel(pair, requireTaskId(params.id), read, repeat, async (tx, canceled) => {
        // A held task never reached the worker: it leaves its approval requests, and there is nothing to forward.
        if (canceled.task.held) {
          await this.approvals.detach(tx, canceled.task.id);
        }
        // A worker with an upstream agent: the cancel is forwarded to it, queued in the cancel's transaction.
        else if (await this.upstreams.queueCancel(tx, canceled.task.id, pair.worker.id)) {
          afterCommit(tx, () => this.forwarder.wake());
        }
      });
      return toA2ATask(task);
    });
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard(async () => {
      const call = callOf(context);
      return toA2APushConfig(
        await this.pushConfigs.set(
          call.pair,
          requireTaskId(params.taskId, 'taskId'),
          fromA2APushConfig(params),
          call.version,
        ),
      );
    });
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard(async () => {
      const { pair } = callOf(context);
      // A v0.3 `get` may omit the config id: the task's first config answers.
      const taskId = requireTaskId(params.taskId, 'taskId');
      const configId = optionalString(params.id, 'id');
      const record = configId
        ? await this.pushConfigs.get(pair, taskId, configId)
        : (await this.pushConfigs.list(pair, taskId))[0];
      if (!record) {
        throw new TaskNotFoundError('The task has no push notification config.');
      }
      return toA2APushConfig(withoutSecrets(record));
    });
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard(async () => ({
      configs: (await this.pushConfigs.list(callOf(context).pair, requireTaskId(params.taskId, 'taskId'))).map(
        (record) => toA2APushConfig(withoutSecrets(record)),
      ),
      nextPageToken: '', // at most 10 per task: always one page
    }));
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.guard(() =>
      this.pushConfigs.delete(
        callOf(context).pair,
        requireTaskId(params.taskId, 'taskId'),
        optionalString(params.id, 'id') ?? '',
      ),
    );
  }

  private async *sendAndFollow(
    call: ProtocolCall,
    params: SendMessageRequest,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // The task as the send left it is the stream's first event: a new one is known
    // without reading it back. A new task's watch is set up before the send writes it,
    // so every later change wakes it and there is nothing to catch up on; otherwise
    // follow reads what came after the task as the send left it.
    const history = this.history(params.configuration?.historyLength);
    let watch: TaskWatch | undefined;
    try {
      const { task } = await this.send(call, params, { historyLength: history, artifacts: true }, (taskId) => {
        watch = this.ledger.watch(taskId);
      });
      const fresh = watch?.taskId === task.id ? watch : undefined;
      // A task held for approval (docs/api.md §16): the requester's stream stays open, as a subscription does, until it is terminal.
      yield* this.follow(call, task.id, history, task.held ? isTerminal : isSettled, task, fresh);
    } finally {
      watch?.close();
    }
  }

  private async *subscribe(call: ProtocolCall, taskId: string): AsyncGenerator<StreamResponse, void, undefined> {
    const task = await this.pairTask(call, taskId, { historyLength: 0, artifacts: false });
    if (isTerminal(task.state)) {
      throw new UnsupportedOperationError(`The task is ${task.state}; there is nothing to subscribe to.`);
    }
    // A2A v1.0 §3.1.6: subscribe works on any non-terminal task and ends when it is terminal.
    yield* this.follow(call, task.id, this.history(undefined), isTerminal);
  }

  /**
   * `starting` hears a new task's id before the send writes it (the stream's watch).
   * The message's skill is read and admitted first (docs/api.md §16): check 3 for it —
   * whose decision also names the sides whose approval a task it starts waits for —
   * then whether the worker's card has it.
   */
  private async send(
    call: ProtocolCall,
    params: SendMessageRequest,
    read: HydrateOptions,
    starting?: (taskId: string) => void,
  ) {
    const skill = skillNamed(params.message, this.skillExtension);
    const { approval } = await this.gate.admitSkill(call, skill);
    requireCallableSkill(call.admitted.worker, skill, this.skillExtension);
    const message = fromA2AMessage(params.message);
    const push = params.configuration?.taskPushNotificationConfig;
    const pushInput = push ? fromA2APushConfig(push) : null;
    const input = {
      message,
      taskId: params.message?.taskId || undefined,
      contextId: params.message?.contextId || undefined,
      metadata: params.metadata ?? null,
      skill,
    };
    // A new task counts against its requester's budget, if it has one, in the statement that creates it (docs/api.md §18).
    const counted = (unit: WriteBatch) =>
      this.usage.countSend(unit, call.pair.requester, call.admitted.requester, new Date());
    // A send that starts a task without a push notification config — the usual one —
    // is one statement, the forward to the worker's upstream agent queued in it.
    if (input.taskId === undefined && !pushInput && approval.length === 0) {
      return refusingOverBudget(this.usage, call, () =>
        this.ledger.start(call.pair, input, read, async (batch, taskId) => {
          starting?.(taskId);
          await counted(batch);
          return this.forwarder.queueMessage(batch, taskId, call.pair, message.messageId);
        }),
      );
    }
    // Otherwise one ledger transaction: the message, then — unless it was a retry — the
    // push notification config it carries and the forward to the worker's upstream agent;
    // or, for a new task that needs a side's approval, its approval request instead of
    // the forward (the task is held from the worker until approved, docs/api.md §16).
    const sent = await refusingOverBudget(this.usage, call, () =>
      this.ledger.write(async (tx) => {
        const sent = await this.ledger.recordSend(tx, call.pair, input);
        if (sent.kind === 'duplicate') {
          return sent;
        }
        if (sent.kind === 'created') {
          await sent.journal.alongside(counted);
        }
        const task = sent.kind === 'created' ? sent.task : sent.journal.task;
        if (pushInput) {
          await this.pushConfigs.save(tx, task, pushInput, call.version);
        }
        if (sent.kind === 'created' && approval.length > 0) {
          await this.approvals.hold(tx, sent, call.pair, approval);
          return sent;
        }
        // A worker with an upstream agent: the message is queued for the forwarder in the send's transaction.
        await this.forwarder.queueMessage(tx, task.id, call.pair, message.messageId);
        return sent;
      }),
    );
    return this.ledger.sendResult(call.pair, sent, read);
  }

  private async pairTask(call: ProtocolCall, taskId: string, read: HydrateOptions): Promise<TaskRecord> {
    const task = await this.ledger.find(call.pair, requireTaskId(taskId), read);
    if (!task) {
      throw new TaskNotFoundError('No such task between this requester and this worker.');
    }
    return task;
  }

  /**
   * A blocking send: wait until the task is terminal or interrupted, or the configured
   * time is up; each read of the task is whole (its row and parts in one statement: it
   * may be the answer). Unless the call was aborted, nothing goes to a caller who could
   * no longer make this call: after a wake-up whose change is not vouched for
   * (CallStanding) the caller is asked about again beside the read; an answer that
   * neither that nor vouching covers is asked about before it goes out — the task read
   * past the announced change, or settled at once or at the time limit without its
   * change announced since the standing was last read.
   */
  private async settle(call: ProtocolCall, task: TaskRecord, read: HydrateOptions): Promise<TaskRecord> {
    const watch = this.ledger.watch(task.id);
    const deadline = Date.now() + this.config.protocolBlockingTimeoutMs;
    const standing = () => (call.signal.aborted ? undefined : call.standing.require());
    // The standing is vouched for up to the change the channel announced last (CallStanding).
    const vouched = () => call.standing.vouchedThrough(watch.announcedThrough);
    try {
      for (let woken = false, seq = task.seq; ; woken = true) {
        // A wake-up whose change is not vouched for asks again, beside the read.
        const beside = woken && vouched() <= seq;
        const [, now] = await Promise.all([beside ? standing() : undefined, this.pairTask(call, task.id, read)]);
        seq = now.seq;
        watch.known(seq);
        const settled = isSettled(now.state);
        if (settled || !(await this.nextChange(watch, call, deadline))) {
          // The answer goes out asked about beside its read, vouched for, or asked about now.
          if (!(settled && beside) && seq > vouched()) {
            await standing();
          }
          return now;
        }
      }
    } finally {
      watch.close();
    }
  }

  /**
   * A stream: the task first, then every update in order, until the task reaches a
   * state where `ends` holds — terminal or interrupted for a streaming send, terminal
   * for a subscription — or the call is aborted. The watch is set up before the first
   * read, so nothing committed in between is missed; a `fresh` watch, set up before
   * the task was written, has seen every change since, so the first read waits for one.
   */
  private async *follow(
    call: ProtocolCall,
    taskId: string,
    history: number,
    ends: (state: TaskState) => boolean,
    initial?: TaskRecord,
    fresh?: TaskWatch,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const watch = fresh ?? this.ledger.watch(taskId);
    try {
      // Given the task as it was (the send's answer), the events after it are read below,
      // after the watch is set up, so nothing committed since is missed either way.
      const task = initial ?? (await this.pairTask(call, taskId, { historyLength: history, artifacts: true }));
      yield { payload: { $case: 'task', value: toA2ATask(task) } };
      if (ends(task.state)) {
        return;
      }
      let seq = task.seq;
      // The task as given is no news (a fresh watch hears of the send's own change).
      watch.known(seq);
      // A read returns the events committed before it (up to a page); each change after
      // it wakes the watch. So: catch up once (unless the watch is fresh), then read
      // after each wake — or at once, while reads come back full.
      for (let woken = false, full = false; ;) {
        if ((woken || fresh) && !full && !(await this.nextChange(watch, call))) {
          return;
        }
        // Nothing reaches a caller who could no longer make this call: once woken, the
        // standing is asked again while the events are read — unless it is vouched for
        // up to the change that woke it (CallStanding); an event past that asks first.
        let vouched = woken || fresh ? call.standing.vouchedThrough(watch.announcedThrough) : Infinity;
        const asked = vouched <= seq;
        // What this instance committed itself is taken as it was written, when that is all there is (TaskWatch.takeCommitted).
        const [events] = await Promise.all([
          watch
            .takeCommitted(seq, call.signal)
            // A call that has ended reads nothing: the loop ends at its next wait.
            .then((taken) => taken ?? (call.signal.aborted ? [] : this.ledger.events(task, seq, EVENTS_PER_READ))),
          asked ? call.standing.require() : undefined,
        ]);
        if (asked) {
          vouched = Infinity;
        }
        for (const event of events) {
          if (event.seq > vouched) {
            await call.standing.require();
            vouched = Infinity;
          }
          seq = event.seq;
          const update = toStreamResponse(task, event);
          if (update) {
            yield update;
          }
          if (event.kind === 'status' && ends(event.state)) {
            return;
          }
        }
        // What was read is no news: a wake-up for it (its notification may come later) is not waited for.
        watch.known(seq);
        woken = true;
        full = events.length === EVENTS_PER_READ;
      }
    } finally {
      if (!fresh) {
        watch.close();
      }
    }
  }

  /**
   * Waits until the task may have changed (true), or the call is aborted or `deadline`
   * passes (false). While nothing happens the call's standing is re-checked every
   * keep-alive interval, so an idle call ends soon after its key is revoked.
   */
  private async nextChange(
    watch: TaskWatch,
    call: ProtocolCall,
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<boolean> {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || call.signal.aborted) {
        return false;
      }
      if (await watch.changed(call.signal, Math.min(left, this.config.sseKeepaliveMs))) {
        return true;
      }
      if (!call.signal.aborted) {
        await call.standing.require();
      }
    }
  }

  /** One task's history: the latest LEDGER_MAX_HISTORY when absent, and never more (A2A lets the server return less). */
  private history(requested: number | undefined): number {
    return clampedTaskHistory(wholeNumber(requested), this.config.ledgerMaxHistory);
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.toA2AError(error);
    }
  }

  private async *guardStream(
    stream: AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* stream;
    } catch (error) {
      throw this.toA2AError(error);
    }
  }

  /**
   * Ledger errors become the A2A errors the spec names; anything unexpected is logged
   * and replaced, so that no internal message (SQL, stack) reaches the caller.
   */
  private toA2AError(error: unknown): unknown {
    // A lost standing ends the call as the checks' HTTP error (ProtocolService), not as an A2A one.
    if (error instanceof A2AError || error instanceof CallRefused) {
      return error;
    }
    const dataError = clientDataError(error);
    if (dataError) {
      return new RequestMalformedError(dataError.detail);
    }
    if (error instanceof AppError) {
      const a2aError = a2aErrorFor(error);
      if (a2aError) {
        return a2aError;
      }
    }
    this.logger.error({ err: error }, 'protocol method failed');
    return new Error('An unexpected error occurred.');
  }
}

/** How many of a task's events a stream reads at once (they carry their messages, which may be large). */
const EVENTS_PER_READ = 100;

/**
 * A missing task id is a malformed request (-32602), as in the SDK's own handler; an
 * unknown one is -32001. The type is checked here too: the request handler is the one
 * boundary every binding passes, and not every binding's decoder checks types.
 */
function requireTaskId(id: unknown, member = 'id'): string {
  if (id !== undefined && id !== null && typeof id !== 'string') {
    throw new RequestMalformedError(`${member} must be a string.`);
  }
  if (!id?.trim()) {
    throw new RequestMalformedError(`The task id (${member}) is required.`);
  }
  return id;
}

function optionalString(value: unknown, member: string): string | undefined {
  if (value === undefined || value === null || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new RequestMalformedError(`${member} must be a string.`);
  }
  return value;
}

function wholeNumber(historyLength: number | undefined): number | undefined {
  if (historyLength === undefined) {
    return undefined;
  }
  if (!Number.isInteger(historyLength) || historyLength < 0) {
    throw new RequestMalformedError('historyLength must be a whole number, 0 or more.');
  }
  return historyLength;
}
