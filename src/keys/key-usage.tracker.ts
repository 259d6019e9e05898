import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/tokens';
import { KeysRepository } from './keys.repository';

/**
 * Keeps `last_used_at` without a write on every request: authenticated requests
 * only note the time in memory, and one batched UPDATE writes the notes every
 * KEY_USAGE_FLUSH_MS (and at shutdown). Reads of a key merge the pending note.
 */
@Injectable()
export class KeyUsageTracker implements OnModuleInit, OnApplicationShutdown {
  private pending = new Map<string, Date>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repository: KeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.config.keyUsageFlushMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  touch(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
  }

  /** The newer of the stored stamp and a use not yet written. */
  latest(keyId: string, stored: Date | null): Date | null {
    const pending = this.pending.get(keyId);
    return pending && (!stored || pending > stored) ? pending : stored;
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) {
      return;
    }
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.repository.recordUsage([...batch.keys()], [...batch.values()]);
    } catch (error) {
      // Not worth failing anything for; keep the notes for the next flush.
      for (const [id, at] of batch) {
        if (!this.pending.has(id)) {
          this.pending.set(id, at);
        }
      }
      this.logger.warn({ err: error }, 'could not record API key usage');
    }
  }
}
