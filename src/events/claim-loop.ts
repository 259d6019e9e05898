import type { Logger } from 'pino';
import type { HeldKeys } from '../database/fair-pick';

/** What a claimed item is held against while it runs: its destination and organization. */
export interface FairKeys {
  destination: string;
  organization: string;
  /** How many slots its destination may hold (the organization share, or less: a failing webhook's). */
  destinationShare: number;
  /** How many slots its organization may hold, when not the loop's `organizationShare`. */
  organizationShare?: number;
}

/**
 * What a loop holds in flight, for its next claim (fairPick's HeldKeys): per destination
 * and organization, how many items, and those at the share they were claimed with.
 */
export interface HeldShares extends HeldKeys {
  /** The loop's `organizationShare`. */
  organizationShare: number;
}

export interface ClaimLoopOptions<T extends FairKeys> {
  /** What is claimed, for the log line of a claim that failed ("deliveries"). */
  what: string;
  /** Items in flight at most. */
  slots: number;
  /** Slots one organization may hold; at least one. */
  organizationShare: number;
  /** How long an idle loop sleeps before it claims again (a wake-up ends the sleep). */
  pollIntervalMs: number;
  logger: Logger;
  /** Claims up to `limit` due items, skipping destinations and organizations at their share (the queue's claim). */
  claim(limit: number, held: HeldShares): Promise<T[]>;
  /** Runs one item to its end; its errors are its own (a rejection is logged). */
  run(item: T): Promise<void>;
  /**
   * With an owner that also begins items it claimed itself (`begin`), a claimed item may
   * find its share taken meanwhile: it is handed back to the queue (unclaimed) instead of run.
   */
  release?(item: T): Promise<void>;
}

/**
 * The claim loop of a queue in PostgreSQL, shared by the webhook dispatcher and the
 * upstream forwarder: keeps up to `slots` items in flight and claims more as slots free
 * up, so a slow destination holds a slot, not the queue. The slots are shared fairly:
 * one organization holds at most `organizationShare` of them and one destination at
 * most its share, so a slow or hostile destination cannot stall everyone else's work.
 * It sleeps `pollIntervalMs` when idle and wakes at once on `wake()`.
 */
export class ClaimLoop<T extends FairKeys> {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly heldByDestination = new Map<string, number>();
  private readonly shareOfDestination = new Map<string, number>();
  private readonly heldByOrganization = new Map<string, number>();
  private readonly shareOfOrganization = new Map<string, number>();
  private woken = false;
  private wakeUp: (() => void) | null = null;

  constructor(private readonly options: ClaimLoopOptions<T>) {}

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) {
      return;
    }
    this.running = true;
    this.loop = this.run();
  }

  /** Stops claiming; the items in flight go on (see `settled`). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  /** Resolves once every item in flight has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  /** There may be new work: claim now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Whether an item with these keys may start now: a slot is free and neither of its shares is full. */
  hasRoom(keys: FairKeys): boolean {
    return (
      this.inFlight.size < this.options.slots &&
      (this.heldByDestination.get(keys.destination) ?? 0) < keys.destinationShare &&
      (this.heldByOrganization.get(keys.organization) ?? 0) < (keys.organizationShare ?? this.options.organizationShare)
    );
  }

  /** Runs an item in one of the slots (one the loop claimed, or one its owner claimed otherwise); true when one of its shares is now full. */
  begin(item: T): boolean {
    const reachedShare = this.hold(item);
    const work = this.options
      .run(item)
      .catch((error: unknown) => this.options.logger.error({ err: error }, `${this.options.what}: a run failed`))
      .finally(() => {
        this.unhold(item);
        this.inFlight.delete(work);
        this.wake();
      });
    this.inFlight.add(work);
    return reachedShare;
  }

  private async run(): Promise<void> {
    const { slots } = this.options;
    while (this.running) {
      this.woken = false;
      const free = slots - this.inFlight.size;
      let claimed: T[] = [];
      if (free > 0) {
        try {
          claimed = await this.options.claim(free, this.held());
        } catch (error) {
          this.options.logger.error({ err: error }, `could not claim ${this.options.what}`);
        }
      }
      let reachedShare = false;
      for (const item of claimed) {
        const { release } = this.options;
        if (release && !this.hasRoom(item)) {
          release(item).catch((error: unknown) =>
            this.options.logger.error({ err: error }, `${this.options.what}: could not release a claim`),
          );
          reachedShare = true;
          continue;
        }
        reachedShare = this.begin(item) || reachedShare;
      }
      // Claim again at once while the queue yields full batches and slots are free, or
      // when a destination or organization reached its share: the next claim skips
      // its backlog, which may have hidden other work from this one.
      if (free > 0 && (claimed.length === free || (reachedShare && claimed.length < free))) {
        continue;
      }
      if (!this.woken && this.running) {
        await this.sleep();
      }
    }
  }

  /** What the next claim is told: what is held, and which keys are at their share. */
  private held(): HeldShares {
    const full = (held: Map<string, number>, shareOf: Map<string, number>) =>
      [...held].filter(([key, n]) => n >= shareOf.get(key)!).map(([key]) => key);
    return {
      heldByDestination: this.heldByDestination,
      heldByOrganization: this.heldByOrganization,
      fullDestinations: full(this.heldByDestination, this.shareOfDestination),
      fullOrganizations: full(this.heldByOrganization, this.shareOfOrganization),
      organizationShare: this.options.organizationShare,
    };
  }

  /** Counts an item against its shares; true when one of them is now full. */
  private hold(item: T): boolean {
    const atDestination = (this.heldByDestination.get(item.destination) ?? 0) + 1;
    const atOrganization = (this.heldByOrganization.get(item.organization) ?? 0) + 1;
    const organizationShare = item.organizationShare ?? this.options.organizationShare;
    this.heldByDestination.set(item.destination, atDestination);
    this.shareOfDestination.set(item.destination, item.destinationShare);
    this.heldByOrganization.set(item.organization, atOrganization);
    this.shareOfOrganization.set(item.organization, organizationShare);
    return atDestination >= item.destinationShare || atOrganization >= organizationShare;
  }

  /** An item has ended: it counts against its shares no more (not the queue's `release`). */
  private unhold(item: T): void {
    const atDestination = (this.heldByDestination.get(item.destination) ?? 1) - 1;
    if (atDestination > 0) {
      this.heldByDestination.set(item.destination, atDestination);
    } else {
      this.heldByDestination.delete(item.destination);
      this.shareOfDestination.delete(item.destination);
    }
    const atOrganization = (this.heldByOrganization.get(item.organization) ?? 1) - 1;
    if (atOrganization > 0) {
      this.heldByOrganization.set(item.organization, atOrganization);
    } else {
      this.heldByOrganization.delete(item.organization);
      this.shareOfOrganization.delete(item.organization);
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      this.wakeUp = done;
    });
  }
}
