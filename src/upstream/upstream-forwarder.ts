import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Part, Role, type Message, type Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import type { Client, RequestOptions } from '@a2a-js/sdk/client';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import type { Tx } from '../database/database';
import type { WriteBatch } from '../database/write-batch';
import { Metrics } from '../metrics/metrics';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ForwardedTasksService } from '../ledger/forwarded-tasks.service';
import type { ForwardedTask, NewMessage, TaskPair } from '../ledger/task-records';
import { isSettled, isTerminal } from '../ledger/task-state';
import { grpcUnreached, reasonOf, refusedDestination } from './upstream-fetch';
import { agentText, AnswerReader, AnswerRefused, isSettledA2A, NotSentAgain } from './upstream-answer';
import { UpstreamAnswerWriter } from './upstream-answer-writer';
import { UpstreamClients } from './upstream-clients';
import {
  UpstreamRepository,
  type ClaimedFairForward,
  type ClaimedForward,
  type UpstreamRecord,
} from './upstream.repository';
import { BoundExceeded, ForwardRun, ForwardStopped, nextPollWait, watched } from './forward-run';
import { ClaimLoop, type FairKeys } from '../events/claim-loop';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { contextFrom, currentTraceparent, inSpan } from '../tracing/tracing';

/** Forwards in flight per forwarder. */
const CONCURRENCY = 20;
/** Cancels in flight per upstream and per organization (apart from their messages' share): a tenth of the slots. */
const CANCEL_SHARE = CONCURRENCY / 10;

/** A forward as the forwarder runs it: claimed, with the keys of its fair share and, when the send handed it over, its upstream. */
interface ForwardItem extends ClaimedFairForward, FairKeys {
  known: UpstreamRecord | null;
}

/** Raised when the forward must be tried again later (the upstream's stream ended early, the task id is not known yet). */
class TryAgain extends Error {}

/**
 * The forwarder (docs/api.md §14): delivers the work sent to an identity with an upstream
 * to that A2A agent, with the official SDK client, and writes every event the upstream
 * answers with into the ledger task (UpstreamAnswerWriter) — through the same journal
 * as a worker's REST reply (ForwardedTasksService.applyUpstream), so blocking sends,
 * streams, push notifications and webhooks see an upstream worker like any other.
 *
 * Durability follows the delivery engine: a queue in PostgreSQL (`upstream_forwards`,
 * written in the send's transaction — claimed by that very write when this forwarder
 * can take it, see queueMessage), claims with SKIP LOCKED and a lease renewed while
 * a forward runs, retries on UPSTREAM_RETRY_SCHEDULE_MS, then the task fails with a
 * status message saying why. Once the upstream has answered a message (`accepted`:
 * an answer written, or any 2xx response or gRPC response, even one that cannot be
 * read), a retry never sends it again: it follows the upstream task (resubscribe, or
 * reads) instead, or — no task id known — the task fails (NotSentAgain); until then
 * the retry sends the same messageId, so an upstream that deduplicates by message id
 * sees it once. What an upstream answers is read by AnswerReader (upstream-answer.ts),
 * under the limits of a REST reply.
 *
 * Isolation: the slots are shared as the webhook dispatcher's are (ClaimLoop), per
 * upstream and per requester organization, and every forward is bounded in total and
 * idle time (ForwardRun), so a slow or hostile upstream holds its share, for a while.
 */
@Injectable()
export class UpstreamForwarder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly loop: ClaimLoop<ForwardItem>;
  /** The forwards running here, by forward id. */
  private readonly runs = new Map<string, ForwardRun>();
  /** Slots one upstream, and one organization, may hold. */
  private readonly share: number;
  private readonly clients: UpstreamClients;
  private readonly answers: UpstreamAnswerWriter;

  constructor(
    private readonly repository: UpstreamRepository,
    private readonly ledger: ForwardedTasksService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {
    this.clients = new UpstreamClients(config);
    this.answers = new UpstreamAnswerWriter(ledger, repository, logger);
    this.share = Math.max(1, Math.floor((CONCURRENCY * config.upstream.maxSharePercent) / 100));
    this.loop = new ClaimLoop<ForwardItem>({
      what: 'upstream forwards',
      slots: CONCURRENCY,
      organizationShare: this.share,
      pollIntervalMs: config.events.pollIntervalMs,
      logger,
      claim: async (limit, held) => {
        const shares = { share: this.share, cancelShare: CANCEL_SHARE };
        const claimed = await this.repository.claim(limit, config.upstream.leaseMs, held, shares);
        return claimed.map((forward) => {
          const share = forward.kind === 'cancel' ? CANCEL_SHARE : this.share;
          return { ...forward, destinationShare: share, organizationShare: share, known: null };
        });
      },
      run: (item) => this.run(item),
      // The sends hand forwards over too (queueMessage): a claim may find its share taken by them meanwhile.
      release: (item) => this.repository.release(item),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.events.dispatcher === 'inline') {
      this.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    this.loop.start();
  }

  /** Stops claiming; forwards in flight are abandoned to their lease (another forwarder, or this one after a restart, resumes them). */
  async stop(): Promise<void> {
    await this.loop.stop();
    for (const run of this.runs.values()) {
      run.stop(new ForwardStopped('shutdown'));
    }
    await this.loop.settled();
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /**
   * In the send's unit of work (transaction or write batch): queues the requester's
   * message when the worker has an
   * upstream. While this forwarder runs and has a slot free, the message is queued
   * claimed by it (the send's commit is the claim, lease and all) and its forward
   * starts as soon as the send has committed — no wake-up, no claim, no read of the
   * upstream, which came with the queueing; else the loop is woken to claim it. A send
   * that rolls back takes its claim with it. Sends committing together may all have
   * seen room: the room is checked again once each has committed, and a forward that
   * finds none is released to the queue (unclaimed, due), whose claim keeps the shares.
   */
  async queueMessage(unit: Tx | WriteBatch, taskId: string, pair: TaskPair, messageId: string): Promise<void> {
    const keys = {
      destination: pair.worker.id,
      organization: pair.requester.organizationId,
      destinationShare: this.share,
    };
    const claim = this.loop.isRunning && this.loop.hasRoom(keys) ? this.config.upstream.leaseMs : null;
    const traceparent = currentTraceparent();
    await this.repository.queueMessage(taskId, pair.worker.id, messageId, traceparent, claim, unit, (queued) => {
      // Stopping: the forward is left to its lease, as the claims of a forwarder that stopped are.
      if (!queued.claimed || !this.loop.isRunning) {
        return this.wake();
      }
      if (this.loop.hasRoom(keys)) {
        return void this.loop.begin({ ...queued.forward, ...keys, known: queued.upstream });
      }
      this.repository
        .release(queued.forward)
        .catch((err: unknown) =>
          this.logger.error({ err, forward_id: queued.forward.id }, 'could not release a forward'),
        )
        .finally(() => this.wake());
    });
  }

  /**
   * Runs a forward this forwarder holds, within its bounds (ForwardRun): the lease is
   * renewed while it runs, and a forward ended elsewhere (its task canceled) stops at
   * the renewal.
   */
  private async run(item: ForwardItem): Promise<void> {
    const run = new ForwardRun(item.taskId, item.kind, item.queuedAt, this.config.upstream);
    this.runs.set(item.id, run);
    const heartbeat = setInterval(() => {
      this.repository
        .renewLease(item, this.config.upstream.leaseMs)
        .then((held) => held || run.stop(new ForwardStopped('ended')))
        .catch(() => undefined);
    }, this.config.upstream.leaseMs / 3);
    try {
      // In the trace of the send (or cancel) that queued it: the upstream calls carry its `traceparent`.
      await inSpan(
        `upstream ${item.kind}`,
        { kind: SpanKind.CLIENT, attributes: { 'a2a.forward.attempt': item.attempt } },
        () => this.forward(item, item.known, run),
        item.traceparent ? contextFrom({ traceparent: item.traceparent }) : ROOT_CONTEXT,
      );
    } finally {
      clearInterval(heartbeat);
      run.dispose();
      this.runs.delete(item.id);
    }
  }

  /** The task was canceled and its cancel forwarded: its message forwards end, here at once, elsewhere at their next lease renewal. */
  private async endMessages(taskId: string): Promise<void> {
    await this.repository.endMessages(taskId);
    for (const run of this.runs.values()) {
      if (run.taskId === taskId && run.kind === 'message') {
        run.stop(new ForwardStopped('ended'));
      }
    }
  }

  /** A bound passed: the forward fails for good, and so does the task, with a status message naming the bound. */
  private async exceeded(forward: ClaimedForward, bound: BoundExceeded): Promise<void> {
    this.logger.warn(
      { forward_id: forward.id, task_id: forward.taskId, reason: bound.message },
      'upstream forward stopped',
    );
    await this.finish(forward, 'failed', bound.message);
    if (forward.kind === 'message') {
      await this.ledger.applyUpstream(forward.taskId, [{ state: 'failed', message: agentText(bound.message) }]);
    }
  }

  /** Whether the upstream's card did not verify while the worker's organization requires it to (docs/api.md §14). */
  private async unverified(upstream: UpstreamRecord, workerIdentityId: string): Promise<boolean> {
    return upstream.card?.verification.status !== 'verified' && this.repository.requiresVerifiedCard(workerIdentityId);
  }

  /** A message for an upstream whose card did not verify is never sent: the forward and the task fail, saying why. */
  private async refuseUnverified(forward: ClaimedForward, upstream: UpstreamRecord): Promise<void> {
    const state = upstream.card ? `its card is ${upstream.card.verification.status}` : 'its card was never verified';
    const message = `Not forwarded: the organization forwards only to upstreams whose Agent Card verified against their pinned keys, and ${state}.`;
    this.logger.warn(
      { forward_id: forward.id, task_id: forward.taskId },
      'upstream forward refused: card not verified',
    );
    await this.finish(forward, 'failed', message);
    await this.ledger.applyUpstream(forward.taskId, [{ state: 'failed', message: agentText(message) }]);
  }

  private async forward(forward: ClaimedForward, known: UpstreamRecord | null, run: ForwardRun): Promise<void> {
    const { signal } = run;
    let upstreamId: string | null = null;
    try {
      // The task and (unless the upstream has it already) the message to send, read together.
      const [task, message] = await Promise.all([
        this.ledger.forwardedTask(forward.taskId),
        forward.kind === 'message' && !forward.accepted
          ? this.ledger.requesterMessage(forward.taskId, forward.messageId)
          : null,
      ]);
      const upstream = task ? (known ?? (await this.repository.upstreamOf(task.workerIdentityId))) : null;
      if (!task || !upstream) {
        return await this.finish(forward, 'failed', 'the identity has no upstream any more');
      }
      upstreamId = upstream.identityId;
      signal.throwIfAborted();
      if (forward.kind === 'message' && !forward.accepted && (await this.unverified(upstream, task.workerIdentityId))) {
        return await this.refuseUnverified(forward, upstream);
      }
      if (forward.kind === 'cancel') {
        await this.cancel(forward, upstream, task.upstreamTaskId, run);
      } else if (!isTerminal(task.state)) {
        await this.deliver(forward, task, message, upstream, run);
      }
      await this.finish(forward, 'succeeded', null);
      await this.repository
        .recordAttempt(upstreamId, true)
        .catch((err: unknown) => this.logger.error({ err, forward_id: forward.id }, 'could not count a forward'));
    } catch (error) {
      // Shutting down: the lease runs out and the forward resumes elsewhere. Ended elsewhere: nothing more to record.
      const stopped: unknown = signal.aborted ? signal.reason : null;
      if (stopped instanceof ForwardStopped) {
        return;
      }
      if (upstreamId) {
        await this.repository
          .recordAttempt(upstreamId, false)
          .catch((err: unknown) =>
            this.logger.error({ err, forward_id: forward.id }, 'could not count a failed forward'),
          );
      }
      await (stopped instanceof BoundExceeded ? this.exceeded(forward, stopped) : this.failed(forward, error)).catch(
        (err: unknown) =>
          this.logger.error({ err, forward_id: forward.id }, 'could not record an upstream forward attempt'),
      );
    }
  }

  /** A requester's message: sent once; then the upstream's answers are written to the task until it settles. */
  private async deliver(
    forward: ClaimedForward,
    current: ForwardedTask,
    stored: NewMessage | null,
    upstream: UpstreamRecord,
    run: ForwardRun,
  ): Promise<void> {
    const client = await this.client(upstream, run);
    const options = this.options(upstream, run.signal);
    const reader = new AnswerReader(this.config.bodyLimitBytes);
    if (forward.accepted) {
      // The upstream has this message already: follow its task instead of sending it again.
      if (!current.upstreamTaskId) {
        throw new NotSentAgain('it never named its task');
      }
      return this.follow(forward, upstream, client, current.upstreamTaskId, options, reader, run);
    }
    if (!stored) {
      return;
    }
    const message: Message = {
      messageId: stored.messageId,
      role: Role.ROLE_USER,
      parts: stored.parts.map((part) => Part.fromJSON(part)),
      taskId: current.upstreamTaskId ?? '',
      contextId: current.upstreamContextId ?? '',
      metadata: stored.metadata ?? undefined,
      extensions: stored.extensions,
      referenceTaskIds: [],
    };
    const request = { tenant: '', message, configuration: undefined, metadata: undefined };
    const call = linked(run.signal);
    let result: Message | Task;
    try {
      if (upstream.streaming) {
        const events = client.sendMessageStream(request, { ...options, signal: call.signal });
        if ((await this.answers.consume(forward, events, call, reader)) === 'terminal') {
          return;
        }
        if (!forward.accepted && this.clients.answered(call.signal)) {
          throw new NotSentAgain('its stream ended at once');
        }
        return await this.requireSettled(forward.taskId);
      }
      result = await client.sendMessage(request, { ...options, signal: call.signal });
    } catch (error) {
      throw await this.unsent(forward, call.signal, error);
    }
    if ((await this.answers.apply(forward, [reader.result(result)])) === 'terminal') {
      return;
    }
    const upstreamTaskId = (result as Task).id;
    if (upstreamTaskId) {
      await this.poll(forward, client, upstreamTaskId, options, reader, run);
    }
  }

  /**
   * A send that failed after the upstream answered it (a 2xx status, or a gRPC response
   * that could not be decoded): the upstream has the message, so it is marked accepted and
   * never sent again; with no task id to follow, the forward ends (NotSentAgain).
   * Whatever else failed is returned as it is.
   */
  private async unsent(forward: ClaimedForward, call: AbortSignal, error: unknown): Promise<unknown> {
    if (forward.accepted || !this.clients.answered(call, error) || error instanceof AnswerRefused || refusalBy(error)) {
      return error;
    }
    await this.answers.accept(forward);
    // Its words: an answer that could not be understood, or a connection lost mid-answer.
    return error instanceof NotSentAgain ? error : new NotSentAgain(reasonOf(error));
  }

  /** After a lost connection: the upstream task as it is now, then (streaming) what follows. */
  private async follow(
    forward: ClaimedForward,
    upstream: UpstreamRecord,
    client: Client,
    upstreamTaskId: string,
    options: RequestOptions,
    reader: AnswerReader,
    run: ForwardRun,
  ): Promise<void> {
    const task = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
    if ((await this.answers.apply(forward, [reader.task(task)])) === 'terminal') {
      return;
    }
    if (isSettledA2A(task.status?.state)) {
      return;
    }
    if (!upstream.streaming) {
      return this.poll(forward, client, upstreamTaskId, options, reader, run);
    }
    const call = linked(run.signal);
    const events = client.resubscribeTask({ tenant: '', id: upstreamTaskId }, { ...options, signal: call.signal });
    try {
      if ((await this.answers.consume(forward, events, call, reader)) === 'terminal') {
        return;
      }
    } catch (error) {
      // The upstream task may have finished between the read and the resubscribe (an SDK agent
      // then refuses to resubscribe to a terminal task): read it once more before giving up.
      if (!refusalBy(error)) {
        throw error;
      }
      const again = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
      if (
        (await this.answers.apply(forward, [reader.task(again)])) === 'terminal' ||
        isSettledA2A(again.status?.state)
      ) {
        return;
      }
      throw error;
    }
    await this.requireSettled(forward.taskId);
  }

  private async poll(
    forward: ClaimedForward,
    client: Client,
    upstreamTaskId: string,
    options: RequestOptions,
    reader: AnswerReader,
    run: ForwardRun,
  ): Promise<void> {
    const { pollIntervalMs, pollMaxIntervalMs } = this.config.upstream;
    let wait: number | null = null;
    for (;;) {
      const local = await this.ledger.forwardedTask(forward.taskId);
      if (!local || isSettled(local.state)) {
        return;
      }
      // Read again later and later (UPSTREAM_POLL_INTERVAL_MS, 1.5 times more each time, up to
      // UPSTREAM_POLL_MAX_INTERVAL_MS): a task that runs long is not read many times a second.
      wait = nextPollWait(wait, pollIntervalMs, pollMaxIntervalMs);
      await run.wait(wait);
      const task = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
      if ((await this.answers.apply(forward, [reader.task(task)])) === 'terminal') {
        return;
      }
    }
  }

  /** A cancel: forwarded to the upstream task, then the task's message forwards end (they take nothing more). */
  private async cancel(
    forward: ClaimedForward,
    upstream: UpstreamRecord,
    upstreamTaskId: string | null,
    run: ForwardRun,
  ): Promise<void> {
    if (upstreamTaskId) {
      const client = await this.client(upstream, run);
      try {
        await client.cancelTask(
          { tenant: '', id: upstreamTaskId, metadata: undefined },
          this.options(upstream, run.signal),
        );
      } catch (error) {
        // The upstream answered: the task is already done there (not cancelable, not found). Nothing more to forward.
        if (!refusalBy(error)) {
          throw error;
        }
      }
    } else if (await this.repository.hasAcceptedPendingMessage(forward.taskId)) {
      throw new TryAgain('the upstream task id is not known yet');
    }
    // Else nothing the upstream answered reached here: there is no upstream task to cancel.
    await this.endMessages(forward.taskId);
  }

  /** The stream ended: the task must be settled (terminal or waiting for the requester), else the forward is tried again. */
  private async requireSettled(taskId: string): Promise<void> {
    const task = await this.ledger.forwardedTask(taskId);
    if (task && !isSettled(task.state)) {
      throw new TryAgain("the upstream's stream ended before the task settled");
    }
  }

  private async finish(forward: ClaimedForward, status: 'succeeded' | 'failed', error: string | null): Promise<void> {
    await this.repository.finish(forward, status, error);
    this.metrics.forward(forward.kind, status);
  }

  /**
   * A failed attempt: again after the schedule's next wait, or — past its end, when
   * the upstream refused the message itself, when its answer broke a limit or could
   * not be read after it accepted the message (which is never sent twice), or when the
   * address rules refuse the upstream — the forward fails and so does the task, with a
   * status message giving the reason (never an address). An upstream that answered is
   * never said to be unreachable.
   */
  private async failed(forward: ClaimedForward, error: unknown): Promise<void> {
    const { reason, final, text } = failureOf(error, forward.accepted);
    const schedule = this.config.upstream.retryScheduleMs;
    this.logger.warn(
      { forward_id: forward.id, task_id: forward.taskId, attempt: forward.attempt, reason },
      'upstream forward attempt failed',
    );
    if (!final && forward.attempt <= schedule.length) {
      await this.repository.retryLater(forward, schedule[forward.attempt - 1], reason);
      this.metrics.forward(forward.kind, 'retrying');
      return;
    }
    await this.finish(forward, 'failed', reason);
    if (forward.kind === 'cancel') {
      // The task is canceled here already.
      return;
    }
    await this.ledger.applyUpstream(forward.taskId, [{ state: 'failed', message: agentText(text) }]);
  }

  /** The upstream's shared client (UpstreamClients), as this forward uses it: its calls and events keep its run from going idle. */
  private async client(upstream: UpstreamRecord, run: ForwardRun): Promise<Client> {
    return watched(await this.clients.of(upstream), run);
  }

  /** The upstream's own credential, and nothing of the requester's. */
  private options(upstream: UpstreamRecord, signal: AbortSignal): RequestOptions {
    const { auth } = upstream;
    const serviceParameters: Record<string, string> = {};
    if (auth.type === 'bearer') {
      serviceParameters.authorization = `Bearer ${auth.value}`;
    }
    if (auth.type === 'api_key') {
      serviceParameters[auth.header!] = auth.value!;
    }
    return { signal, serviceParameters };
  }
}

/**
 * What a failed attempt comes to: its reason (the forward's last error and the log's),
 * whether no retry could change it, and the task's status message should it fail.
 */
function failureOf(error: unknown, accepted: boolean): { reason: string; final: boolean; text: string } {
  if (error instanceof AnswerRefused) {
    return { reason: error.message, final: true, text: `The upstream agent's answer was refused: ${error.message}.` };
  }
  if (error instanceof NotSentAgain) {
    const text = `The upstream agent accepted the message, but ${error.message}; the message is not sent again.`;
    return { reason: error.message, final: true, text };
  }
  const refusal = refusalBy(error);
  if (refusal) {
    const said = refusal.message.slice(0, 200);
    return {
      reason: `it refused the request: ${said}`,
      final: true,
      text: `The upstream agent refused the message: ${said}.`,
    };
  }
  const reason = error instanceof TryAgain ? error.message : reasonOf(error);
  return {
    reason,
    // A destination the address rules refuse is refused at every retry too: it fails at once.
    final: refusedDestination(error),
    text: accepted
      ? `The upstream agent stopped answering: ${reason}.`
      : `The upstream agent could not be reached: ${reason}.`,
  };
}

/**
 * The upstream's A2A error, when it answered with one (not a gRPC call that failed before
 * it could answer) — thrown as it is, or as the cause of a stream's error event — else null.
 */
function refusalBy(error: unknown): A2AError | null {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const found = error instanceof A2AError ? error : cause instanceof A2AError ? cause : null;
  return found !== null && grpcUnreached(found) === null ? found : null;
}

/** A controller for one upstream call, aborted with the forward (shutdown) or on its own (the task took no more). */
function linked(signal: AbortSignal): AbortController {
  const call = new AbortController();
  if (signal.aborted) {
    call.abort();
  } else {
    signal.addEventListener('abort', () => call.abort(), { once: true });
  }
  return call;
}
