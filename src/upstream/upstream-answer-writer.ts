import type { StreamResponse } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import {
  ForwardedTasksService,
  UPSTREAM_UPDATES_PER_TRANSACTION,
  type UpstreamApplied,
  type UpstreamUpdate,
} from '../ledger/forwarded-tasks.service';
import { refusalOf, type AnswerReader } from './upstream-answer';
import type { ClaimedForward, UpstreamRepository } from './upstream.repository';

/**
 * Writes what an upstream answered to one forward into the forward's ledger task
 * (ForwardedTasksService.applyUpstream), and marks the forward accepted the first time
 * the upstream answers, so a retry never sends the message again. The forwarder reads
 * the answers (AnswerReader) and hands them over here.
 */
export class UpstreamAnswerWriter {
  constructor(
    private readonly ledger: ForwardedTasksService,
    private readonly repository: UpstreamRepository,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads a stream of upstream events while writing them: whatever has arrived by the
   * time the previous write is done goes to the ledger in one transaction, and so does
   * whatever arrives while that transaction is being written — at most
   * UPSTREAM_UPDATES_PER_TRANSACTION at a time, so a flood of events makes many short
   * transactions, never one long one. Returns `terminal` when
   * the task took no more (the stream is then closed), `ended` when the upstream closed
   * it; an error of the stream is thrown.
   */
  async consume(
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
          if (done) {
            break;
          }
          await new Promise<void>((resolve) => (waiting.wake = resolve));
          waiting.wake = null;
          continue;
        }
        const next = () => queue.splice(0, UPSTREAM_UPDATES_PER_TRANSACTION).map((event) => reader.event(event));
        if ((await this.apply(forward, next(), next)) === 'terminal') {
          return 'terminal';
        }
      }
      if (failure) {
        throw failure;
      }
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
  async apply(
    forward: ClaimedForward,
    updates: Array<UpstreamUpdate | null>,
    more: () => Array<UpstreamUpdate | null> = () => [],
  ): Promise<'applied' | 'terminal'> {
    const present = updates.filter(isPresent);
    const accept = !forward.accepted;
    if (present.length === 0) {
      if (accept) {
        await this.accept(forward);
      }
      return 'applied';
    }
    let applied: UpstreamApplied;
    try {
      applied = await this.ledger.applyUpstream(
        forward.taskId,
        present,
        () => more().filter(isPresent),
        accept ? (unit) => this.repository.markAccepted(forward, unit) : undefined,
      );
    } catch (error) {
      if (accept) {
        await this.accept(forward);
      }
      throw refusalOf(error);
    }
    forward.accepted = true;
    if (applied.refused.length > 0) {
      this.logger.warn(
        { task_id: forward.taskId, states: applied.refused },
        'the upstream reported state changes the task does not allow; ignored',
      );
    }
    return applied.terminal ? 'terminal' : 'applied';
  }

  /** The upstream has the message, whatever it answered: a retry never sends it again. */
  async accept(forward: ClaimedForward): Promise<void> {
    await this.repository.markAccepted(forward);
    forward.accepted = true;
  }
}

function isPresent(update: UpstreamUpdate | null): update is UpstreamUpdate {
  return update !== null;
}
