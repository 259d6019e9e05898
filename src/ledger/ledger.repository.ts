import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { GenerateSql } from '../database/generate-sql';
import { sql } from '../database/sql';

/**
 * Every statement on the ledger's tables (tasks, contexts, messages, task_events,
 * artifacts, push_notification_configs and idempotency_keys).
 */
@Injectable()
export class LedgerRepository {
  constructor(private readonly db: Database) {}

  // for retention: expired Idempotency-Key records, deleted in bounded batches (src/retention)
  /** Deletes up to `batch` idempotency keys older than `ttlHours` (they are never replayed again); how many went. */
  @GenerateSql({ params: [24, 500] })
  async pruneIdempotencyKeys(ttlHours: number, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM idempotency_keys WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${ttlHours}::int)
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}
