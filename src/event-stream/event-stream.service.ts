import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { Request, Response } from 'express';
import { eventScope } from '../auth/access';
import { AccessTokenVerifier } from '../auth/credential-verifiers';
import type { ConsolePrincipal, KeyPrincipal } from '../common/principal';
import { AppError, unauthorized } from '../common/app-error';
import { pageLimit } from '../common/pagination';
import { problemBody } from '../common/problem.filter';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ConsoleService } from '../console/console.service';
import { EventFeed, type FeedScope } from '../events/event-feed';
import { KeysService } from '../keys/keys.service';
import { eventsKey, TaskNotifier } from '../events/task-notifier';
import { OpenCalls } from '../limits/open-calls';
import { writeFrame } from '../protocol/sse';
import { isEventId, type ListEventsQuery, type StreamEventsQuery } from './dto/events.query';

type Caller = KeyPrincipal | ConsolePrincipal;

/** Events written per read of the outbox while a stream catches up. */
const BATCH = 100;
/** While committed events wait behind an open transaction: look again after this long, then twice as long, up to a second. */
const HELD_RETRY_MS = 5;
const HELD_RETRY_MAX_MS = 1_000;

/**
 * `GET /api/v1/events` and `GET /api/v1/events/stream` (docs/api.md §14). The feed
 * gives the outbox in commit order; the stream follows it: it reads what came after
 * its position, writes it (`id:` is the event id, so `Last-Event-ID` resumes), and
 * sleeps until the organization's next commit wakes it (LISTEN/NOTIFY, any instance)
 * or the keep-alive interval passes. Each time it wakes it asks again whether the
 * caller's key or session still holds: a revoked one ends the stream with an `error`
 * event. It holds one of the caller's open-call slots while it lasts.
 */
@Injectable()
export class EventStreamService implements OnModuleDestroy {
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly feed: EventFeed,
    private readonly notifier: TaskNotifier,
    private readonly keys: KeysService,
    private readonly tokens: AccessTokenVerifier,
    private readonly console: ConsoleService,
    private readonly openCalls: OpenCalls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Shutdown: open streams end (clients reconnect with Last-Event-ID elsewhere). */
  onModuleDestroy(): void {
    for (const stream of this.inFlight) {
      stream.abort();
    }
  }

  list(principal: Caller, query: ListEventsQuery) {
    return this.feed.list(scopeOf(principal), {
      types: query.type ?? null,
      after: query.after,
      limit: pageLimit(query),
      cursor: query.cursor,
    });
  }

  async stream(principal: Caller, query: StreamEventsQuery, req: Request, res: Response): Promise<void> {
    const scope = scopeOf(principal);
    const resumeFrom = lastEventId(req) ?? query.after;
    let position = resumeFrom === undefined ? await this.feed.horizon() : await this.feed.positionOf(scope, resumeFrom);
    const types = query.type ?? null;
    const release = this.openCalls.take(principal.kind === 'console' ? principal.sessionId : principal.id);
    if (!release) {
      throw new AppError(
        429,
        'too_many_open_calls',
        `This credential already has ${this.config.protocolMaxOpenCallsPerKey} streams and blocking sends open; close one first.`,
      );
    }

    const abort = new AbortController();
    this.inFlight.add(abort);
    res.on('close', () => abort.abort());
    let woken = true;
    let wakeUp: (() => void) | null = null;
    const wake = () => {
      woken = true;
      wakeUp?.();
    };
    // Subscribed before the first read: a commit in between wakes the loop again.
    const unsubscribe = this.notifier.subscribe(eventsKey(scope.organizationId), wake);
    const maxDuration = setTimeout(() => abort.abort(), this.config.sseMaxDurationMs);
    abort.signal.addEventListener('abort', wake);
    try {
      res.status(200);
      res.setHeader('Content-Type', 'text/event-stream');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('Connection', 'keep-alive');
      res.setHeader('X-Accel-Buffering', 'no');
      res.flushHeaders();
      await writeFrame(res, 'retry: 1000\n\n', abort.signal);
      let heldFor = 0;
      let lastWrite = Date.now();
      while (!abort.signal.aborted) {
        if (!woken) {
          // Silent for SSE_KEEPALIVE_MS however often the stream wakes (an agent's stream wakes on its whole organization's events).
          const untilKeepAlive = Math.max(0, lastWrite + this.config.sseKeepaliveMs - Date.now());
          const timedOut = await this.sleep(
            heldFor > 0 ? Math.min(heldFor, untilKeepAlive) : untilKeepAlive,
            (resolve) => (wakeUp = resolve),
          );
          wakeUp = null;
          if (abort.signal.aborted) {
            break;
          }
          if (timedOut && Date.now() - lastWrite >= this.config.sseKeepaliveMs) {
            // Idle: ask about the caller's standing, and say the connection is alive.
            const lost = await this.standing(principal);
            if (lost) {
              return await this.refuse(req, res, lost, abort.signal);
            }
            if (!res.writableNeedDrain) {
              await writeFrame(res, ': keep-alive\n\n', abort.signal);
            }
            lastWrite = Date.now();
            if (heldFor === 0) {
              continue;
            }
          }
        }
        woken = false;
        const [lost, read] = await Promise.all([
          this.standing(principal),
          this.feed.after(scope, position, types, BATCH),
        ]);
        if (lost) {
          return await this.refuse(req, res, lost, abort.signal);
        }
        for (const event of read.events) {
          await writeFrame(res, `id: ${event.envelope.id}\ndata: ${JSON.stringify(event.envelope)}\n\n`, abort.signal);
          position = event.position;
          lastWrite = Date.now();
        }
        if (read.events.length === BATCH) {
          woken = true;
        }
        heldFor = read.held ? Math.min(heldFor === 0 ? HELD_RETRY_MS : heldFor * 2, HELD_RETRY_MAX_MS) : 0;
      }
    } catch (error) {
      if (!abort.signal.aborted) {
        throw error;
      }
    } finally {
      clearTimeout(maxDuration);
      unsubscribe();
      this.inFlight.delete(abort);
      release();
      res.end();
    }
  }

  /** Resolves true after `ms`, or false as soon as woken. */
  private sleep(ms: number, onWake: (resolve: () => void) => void): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(true), ms);
      onWake(() => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  }

  /** The key is still active (not revoked, not expired) / the session still signed in (one indexed probe). */
  private async standing(principal: Caller): Promise<AppError | null> {
    if (principal.kind === 'agent' && principal.federated) {
      return this.tokens.lostStanding(principal);
    }
    if (principal.kind !== 'console') {
      return this.keys.lostStanding(principal.id);
    }
    return (await this.console.isSessionActive(principal.sessionId))
      ? null
      : unauthorized('invalid_session', 'The session ended while this stream was open.');
  }

  /** The last event of a stream whose caller lost its standing: the problem it would get now. */
  private async refuse(req: Request, res: Response, error: AppError, signal: AbortSignal): Promise<void> {
    await writeFrame(res, `event: error\ndata: ${JSON.stringify(problemBody(req, error))}\n\n`, signal);
  }
}

function scopeOf(principal: Caller): FeedScope {
  return eventScope(principal);
}

/** `Last-Event-ID`, when it is an event id (anything else → 400, as `after` would be). */
function lastEventId(req: Request): string | undefined {
  const value = req.header('last-event-id');
  if (value === undefined || value === '') {
    return undefined;
  }
  if (!isEventId(value)) {
    throw new AppError(400, 'invalid_last_event_id', 'Last-Event-ID must be an event id (evt_…) from this stream.');
  }
  return value;
}
