import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AgentCard, Part, Role, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
  type RequestOptions,
  type TransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import type { Tx } from '../database/database';
import type { WriteBatch } from '../database/write-batch';
import { Metrics } from '../metrics/metrics';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { systemResolver } from '../events/delivery-sender';
import {
  LedgerService,
  UPSTREAM_UPDATES_PER_TRANSACTION,
  type ForwardedTask,
  type UpstreamApplied,
  type UpstreamUpdate,
} from '../ledger/ledger.service';
import type { NewMessage } from '../ledger/task-journal';
import { isSettled, isTerminal } from '../ledger/task-state';
import { grpcUnreached, reasonOf, upstreamFetch, vetUpstream } from './upstream-fetch';
import { agentText, AnswerReader, AnswerRefused, isSettledA2A, NotSentAgain, refusalOf } from './upstream-answer';
import { tolerantFetch } from './upstream-tolerance';
import { UpstreamRepository, type ClaimedForward, type UpstreamRecord } from './upstream.repository';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { contextFrom, inSpan } from '../tracing/tracing';
import { UpstreamsService } from './upstreams.service';

/** A non-streaming upstream's unsettled task is read again this often. */
const POLL_MS = 500;
/** Forwards in flight per forwarder. */
const CONCURRENCY = 20;

/** Raised when the forward must be tried again later (the upstream's stream ended early, the task id is not known yet). */
class TryAgain extends Error {}

/**
 * The forwarder (CONTRACT §14): delivers the work sent to an identity with an upstream
 * to that A2A agent, with the official SDK client, and writes every event the upstream
 * answers with into the ledger task — through the same journal as a worker's REST
 * reply (LedgerService.applyUpstream), so blocking sends, streams, push notifications
 * and webhooks see an upstream worker like any other.
 *
 * Durability follows the delivery engine: a queue in PostgreSQL (`upstream_forwards`,
 * written in the send's transaction — claimed by that very write when this forwarder
 * can take it, see queueMessage), claims with SKIP LOCKED and a lease renewed while
 * a forward runs, retries on UPSTREAM_RETRY_SCHEDULE_MS, then the task fails with a
 * status message saying why. Once the upstream has answered a message (`accepted`:
 * an answer written, or any 2xx response, even one that cannot be read), a retry
 * never sends it again: it follows the upstream task (resubscribe, or reads) instead,
 * or — no task id known — the task fails (NotSentAgain); until then the retry sends
 * the same messageId, so an upstream that deduplicates by message id sees it once.
 * What an upstream answers is read by AnswerReader (upstream-answer.ts), under the
 * limits of a REST reply.
 */
@Injectable()
export class UpstreamForwarder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private woken = false;
  private wakeUp: (() => void) | null = null;
  private readonly fetch: typeof fetch;
  /** The calls whose upstream answered with a 2xx status (tolerantFetch): it has the message. */
  private readonly answered = new WeakSet<AbortSignal>();
  private readonly clients = new Map<string, { version: string; client: Promise<Client> }>();

  constructor(
    private readonly repository: UpstreamRepository,
    private readonly ledger: LedgerService,
    private readonly upstreams: UpstreamsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {
    const guarded = upstreamFetch({
      allowPrivateNetworks: config.webhooksAllowPrivateNetworks,
      resolve: systemResolver,
      timeoutMs: config.upstream.timeoutMs,
      maxResponseBytes: config.upstream.maxResponseBytes,
    });
    this.fetch = tolerantFetch(guarded, this.answered);
  }

  onApplicationBootstrap(): void {
    if (this.config.events.dispatcher === 'inline') this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops claiming; forwards in flight are abandoned to their lease (another forwarder, or this one after a restart, resumes them). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    for (const abort of this.inFlight.values()) abort.abort();
    await Promise.all(this.inFlight.keys());
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      const free = CONCURRENCY - this.inFlight.size;
      let claimed: ClaimedForward[] = [];
      if (free > 0) {
        try {
          claimed = await this.repository.claim(free, this.config.upstream.leaseMs);
        } catch (error) {
          this.logger.error({ err: error }, 'could not claim upstream forwards');
        }
      }
      for (const forward of claimed) this.begin(forward, null);
      if (claimed.length === free && free > 0) continue;
      if (!this.woken && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, this.config.events.pollIntervalMs);
          function done() {
            clearTimeout(timer);
            resolve();
          }
          this.wakeUp = done;
        });
        this.wakeUp = null;
      }
    }
  }

  /**
   * In the send's unit of work (transaction or write batch): queues the requester's
   * message when the worker has an
   * upstream. While this forwarder runs and has a slot free, the message is queued
   * claimed by it (the send's commit is the claim, lease and all) and its forward
   * starts as soon as the send has committed — no wake-up, no claim, no read of the
   * upstream, which came with the queueing; else the loop is woken to claim it. A send
   * that rolls back takes its claim with it. (Sends committing together can take this
   * forwarder past CONCURRENCY by at most the pool's connections, one per transaction.)
   */
  async queueMessage(
    unit: Tx | WriteBatch,
    taskId: string,
    workerIdentityId: string,
    messageId: string,
  ): Promise<void> {
    const claim = this.running && this.inFlight.size < CONCURRENCY ? this.config.upstream.leaseMs : null;
    await this.upstreams.queueMessage(unit, taskId, workerIdentityId, messageId, claim, (queued) => {
      if (queued.claimed) this.begin(queued.forward, queued.upstream);
      else this.wake();
    });
  }

  /** Runs a forward this forwarder holds; `upstream` when it is known already (read with the claim). */
  private begin(forward: ClaimedForward, upstream: UpstreamRecord | null): void {
    // Stopping: the forward is left to its lease, as the claims of a forwarder that stopped are.
    if (!this.running) return;
    const abort = new AbortController();
    // In the trace of the send (or cancel) that queued it: the upstream calls carry its `traceparent`.
    const work = inSpan(
      `upstream ${forward.kind}`,
      { kind: SpanKind.CLIENT, attributes: { 'a2a.forward.attempt': forward.attempt } },
      () => this.forward(forward, upstream, abort.signal),
      forward.traceparent ? contextFrom({ traceparent: forward.traceparent }) : ROOT_CONTEXT,
    ).finally(() => {
      this.inFlight.delete(work);
      this.wake();
    });
    this.inFlight.set(work, abort);
  }

  private async forward(forward: ClaimedForward, known: UpstreamRecord | null, signal: AbortSignal): Promise<void> {
    const heartbeat = setInterval(() => {
      this.repository.renewLease(forward, this.config.upstream.leaseMs).catch(() => undefined);
    }, this.config.upstream.leaseMs / 3);
    try {
      // The task and (unless the upstream has it already) the message to send, read together.
      const [task, message] = await Promise.all([
        this.ledger.forwardedTask(forward.taskId),
        forward.kind === 'message' && !forward.accepted
          ? this.ledger.requesterMessage(forward.taskId, forward.messageId)
          : null,
      ]);
      const upstream = task ? (known ?? (await this.upstreams.upstreamOf(task.workerIdentityId))) : null;
      if (!task || !upstream) return await this.finish(forward, 'failed', 'the identity has no upstream any more');
      if (forward.kind === 'cancel') await this.cancel(forward, upstream, task.upstreamTaskId, signal);
      else if (!isTerminal(task.state)) await this.deliver(forward, task, message, upstream, signal);
      await this.finish(forward, 'succeeded', null);
    } catch (error) {
      if (signal.aborted) return; // shutting down: the lease runs out and the forward resumes elsewhere
      await this.failed(forward, error).catch((err: unknown) =>
        this.logger.error({ err, forward_id: forward.id }, 'could not record an upstream forward attempt'),
      );
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A requester's message: sent once; then the upstream's answers are written to the task until it settles. */
  private async deliver(
    forward: ClaimedForward,
    current: ForwardedTask,
    stored: NewMessage | null,
    upstream: UpstreamRecord,
    signal: AbortSignal,
  ): Promise<void> {
    const client = await this.client(upstream);
    const options = this.options(upstream, signal);
    const reader = new AnswerReader(this.config.bodyLimitBytes);
    if (forward.accepted) {
      // The upstream has this message already: follow its task instead of sending it again.
      if (!current.upstreamTaskId) throw new NotSentAgain('it never named its task');
      return this.follow(forward, upstream, client, current.upstreamTaskId, options, reader);
    }
    if (!stored) return;
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
    const call = linked(signal);
    let result: Message | Task;
    try {
      if (upstream.streaming) {
        const events = client.sendMessageStream(request, { ...options, signal: call.signal });
        if ((await this.consume(forward, events, call, reader)) === 'terminal') return;
        if (!forward.accepted && this.answered.has(call.signal)) throw new NotSentAgain('its stream ended at once');
        return await this.requireSettled(forward.taskId);
      }
      result = await client.sendMessage(request, { ...options, signal: call.signal });
    } catch (error) {
      throw await this.unsent(forward, call.signal, error);
    }
    if ((await this.apply(forward, [reader.result(result)])) === 'terminal') return;
    const upstreamTaskId = (result as Task).id;
    if (upstreamTaskId) await this.poll(forward, client, upstreamTaskId, options, reader);
  }

  /**
   * A send that failed after the upstream answered it with a 2xx status: the upstream has
   * the message, so it is marked accepted and never sent again; with no task id to follow,
   * the forward ends (NotSentAgain). Whatever else failed is returned as it is.
   */
  private async unsent(forward: ClaimedForward, call: AbortSignal, error: unknown): Promise<unknown> {
    if (forward.accepted || !this.answered.has(call) || error instanceof AnswerRefused || refusalBy(error))
      return error;
    await this.accept(forward);
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
  ): Promise<void> {
    const task = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
    if ((await this.apply(forward, [reader.task(task)])) === 'terminal') return;
    if (isSettledA2A(task.status?.state)) return;
    if (!upstream.streaming) return this.poll(forward, client, upstreamTaskId, options, reader);
    const call = linked(options.signal!);
    const events = client.resubscribeTask({ tenant: '', id: upstreamTaskId }, { ...options, signal: call.signal });
    try {
      if ((await this.consume(forward, events, call, reader)) === 'terminal') return;
    } catch (error) {
      // The upstream task may have finished between the read and the resubscribe (an SDK agent
      // then refuses to resubscribe to a terminal task): read it once more before giving up.
      if (!refusalBy(error)) throw error;
      const again = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
      if ((await this.apply(forward, [reader.task(again)])) === 'terminal' || isSettledA2A(again.status?.state)) return;
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
  ): Promise<void> {
    for (;;) {
      const local = await this.ledger.forwardedTask(forward.taskId);
      if (!local || isSettled(local.state)) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      options.signal?.throwIfAborted();
      const task = await client.getTask({ tenant: '', id: upstreamTaskId, historyLength: 0 }, options);
      if ((await this.apply(forward, [reader.task(task)])) === 'terminal') return;
    }
  }

  private async cancel(
    forward: ClaimedForward,
    upstream: UpstreamRecord,
    upstreamTaskId: string | null,
    signal: AbortSignal,
  ): Promise<void> {
    if (!upstreamTaskId) {
      // Nothing reached the upstream: the message forward sees the task canceled and stops there.
      if (!(await this.repository.hasAcceptedPendingMessage(forward.taskId))) return;
      throw new TryAgain('the upstream task id is not known yet');
    }
    const client = await this.client(upstream);
    try {
      await client.cancelTask({ tenant: '', id: upstreamTaskId, metadata: undefined }, this.options(upstream, signal));
    } catch (error) {
      // The upstream answered: the task is already done there (not cancelable, not found). Nothing more to forward.
      if (refusalBy(error)) return;
      throw error;
    }
  }

  /** The stream ended: the task must be settled (terminal or waiting for the requester), else the forward is tried again. */
  private async requireSettled(taskId: string): Promise<void> {
    const task = await this.ledger.forwardedTask(taskId);
    if (task && !isSettled(task.state)) throw new TryAgain("the upstream's stream ended before the task settled");
  }

  /**
   * Reads a stream of upstream events while writing them: whatever has arrived by the
   * time the previous write is done goes to the ledger in one transaction, and so does
   * whatever arrives while that transaction is being written — at most
   * UPSTREAM_UPDATES_PER_TRANSACTION at a time, so a flood of events makes many short
   * transactions, never one long one. Returns `terminal` when
   * the task took no more (the stream is then closed), `ended` when the upstream closed
   * it; an error of the stream is thrown.
   */
  private async consume(
    forward: ClaimedForward,
    events: AsyncGenerator<StreamResponse>,
    call: AbortController,
    reader: AnswerReader,
  ): Promise<'terminal' | 'ended'> {
    const queue: StreamResponse[] = [];
    let done = false;
    let failure: unknown = null;
    const waiting: { wake: (() => void) | null } = { wake: null };
    const pump = (async () => {
      try {
        for await (const event of events) {
          queue.push(event);
          waiting.wake?.();
        }
      } catch (error) {
        failure = error;
      } finally {
        done = true;
        waiting.wake?.();
      }
    })();
    try {
      for (;;) {
        if (queue.length === 0) {
          if (done) break;
          await new Promise<void>((resolve) => (waiting.wake = resolve));
          waiting.wake = null;
          continue;
        }
        const next = () => queue.splice(0, UPSTREAM_UPDATES_PER_TRANSACTION).map((event) => reader.event(event));
        if ((await this.apply(forward, next(), next)) === 'terminal') return 'terminal';
      }
      if (failure) throw failure;
      return 'ended';
    } finally {
      call.abort();
      await pump;
    }
  }

  /**
   * Writes what the upstream answered in one ledger transaction, with the updates that
   * arrive meanwhile (`more`). The upstream's first answer to a message also marks the
   * forward accepted in that transaction (after the task's lock, the order every writer
   * of both takes), so a retry never sends the message again and finds the upstream
   * task's id recorded with it; should the write fail, the mark is made on its own
   * before the error goes on.
   */
  private async apply(
    forward: ClaimedForward,
    updates: Array<UpstreamUpdate | null>,
    more: () => Array<UpstreamUpdate | null> = () => [],
  ): Promise<'applied' | 'terminal'> {
    const present = updates.filter(isPresent);
    const accept = !forward.accepted;
    if (present.length === 0) {
      if (accept) await this.accept(forward);
      return 'applied';
    }
    let applied: UpstreamApplied;
    try {
      applied = await this.ledger.write((tx) =>
        this.ledger.recordUpstream(
          tx,
          forward.taskId,
          present,
          () => more().filter(isPresent),
          accept ? (unit) => this.repository.markAccepted(forward, unit) : undefined,
        ),
      );
    } catch (error) {
      if (accept) await this.accept(forward);
      throw refusalOf(error);
    }
    forward.accepted = true;
    if (applied.refused.length > 0)
      this.logger.warn(
        { task_id: forward.taskId, states: applied.refused },
        'the upstream reported state changes the task does not allow; ignored',
      );
    return applied.terminal ? 'terminal' : 'applied';
  }

  private async accept(forward: ClaimedForward): Promise<void> {
    await this.repository.markAccepted(forward);
    forward.accepted = true;
  }

  private async finish(forward: ClaimedForward, status: 'succeeded' | 'failed', error: string | null): Promise<void> {
    await this.repository.finish(forward, status, error);
    this.metrics.forward(forward.kind, status);
  }

  /**
   * A failed attempt: again after the schedule's next wait, or — past its end, or when
   * the upstream refused the message itself, or when its answer broke a limit or could
   * not be read after it accepted the message (which is never sent twice) — the forward
   * fails and so does the task, with a status message giving the reason (never an
   * address). An upstream that answered is never said to be unreachable.
   */
  private async failed(forward: ClaimedForward, error: unknown): Promise<void> {
    const refusal = refusalBy(error);
    const final = refusal !== null || error instanceof AnswerRefused || error instanceof NotSentAgain;
    const reason =
      error instanceof TryAgain || error instanceof AnswerRefused || error instanceof NotSentAgain
        ? error.message
        : refusal
          ? `it refused the request: ${refusal.message.slice(0, 200)}`
          : reasonOf(error);
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
    if (forward.kind === 'cancel') return; // the task is canceled here already
    const text =
      error instanceof AnswerRefused
        ? `The upstream agent's answer was refused: ${reason}.`
        : error instanceof NotSentAgain
          ? `The upstream agent accepted the message, but ${reason}; the message is not sent again.`
          : refusal
            ? `The upstream agent refused the message: ${refusal.message.slice(0, 200)}.`
            : forward.accepted
              ? `The upstream agent stopped answering: ${reason}.`
              : `The upstream agent could not be reached: ${reason}.`;
    await this.ledger.applyUpstream(forward.taskId, [{ state: 'failed', message: agentText(text) }]);
  }

  /**
   * One SDK client per upstream (rebuilt when the upstream changes), with the transport
   * of its binding: JSON-RPC or HTTP+JSON over upstreamFetch (vetted, pinned, no
   * redirects, limits), or gRPC — whose channel resolves the name itself, so its host is
   * vetted before every forward (TLS for https, plaintext only for http, which only
   * WEBHOOKS_ALLOW_PRIVATE_NETWORKS allows).
   */
  private async client(upstream: UpstreamRecord): Promise<Client> {
    const url = new URL(upstream.url);
    if (upstream.binding === 'GRPC') {
      await vetUpstream(url, {
        allowPrivateNetworks: this.config.webhooksAllowPrivateNetworks,
        resolve: systemResolver,
        timeoutMs: this.config.upstream.timeoutMs,
      });
    }
    const version = upstream.updatedAt.toISOString();
    const cached = this.clients.get(upstream.identityId);
    if (cached?.version === version) return cached.client;
    const endpoint =
      upstream.binding === 'GRPC'
        ? `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`
        : upstream.url;
    const card = AgentCard.fromJSON({
      name: 'upstream',
      description: '',
      version: '1',
      supportedInterfaces: [
        { url: endpoint, protocolBinding: upstream.binding, protocolVersion: upstream.protocolVersion },
      ],
      capabilities: { streaming: upstream.streaming },
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [],
    });
    const legacyCompat = { enabled: true };
    const transports: Record<UpstreamRecord['binding'], () => TransportFactory> = {
      JSONRPC: () => new JsonRpcTransportFactory({ legacyCompat, fetchImpl: this.fetch }),
      'HTTP+JSON': () => new RestTransportFactory({ legacyCompat, fetchImpl: this.fetch }),
      GRPC: () =>
        new GrpcTransportFactory({
          legacyCompat,
          grpcChannelCredentials:
            url.protocol === 'https:' ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(),
        }),
    };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [transports[upstream.binding]()] }),
    );
    const client = factory.createFromAgentCard(card);
    this.clients.set(upstream.identityId, { version, client });
    client.catch(() => this.clients.delete(upstream.identityId));
    return client;
  }

  /** The upstream's own credential, and nothing of the requester's. */
  private options(upstream: UpstreamRecord, signal: AbortSignal): RequestOptions {
    const { auth } = upstream;
    const serviceParameters: Record<string, string> = {};
    if (auth.type === 'bearer') serviceParameters.authorization = `Bearer ${auth.value}`;
    if (auth.type === 'api_key') serviceParameters[auth.header!] = auth.value!;
    return { signal, serviceParameters };
  }
}

function isPresent(update: UpstreamUpdate | null): update is UpstreamUpdate {
  return update !== null;
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
  if (signal.aborted) call.abort();
  else signal.addEventListener('abort', () => call.abort(), { once: true });
  return call;
}
