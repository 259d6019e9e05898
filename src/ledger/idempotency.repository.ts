import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import type { IdempotencyKey } from './entities/idempotency-key.entity';

type IdempotencyRow = Pick<RowOf<IdempotencyKey>, 'request_hash' | 'response_status' | 'response_body'>;

/** The idempotency_keys table: a claimed key and the response it replays. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: Database) {}

  /**
   * Claims the key: inserts it, or takes over one older than `ttlHours`. False when a
   * live claim exists (a concurrent claim waits on the unique index until the first
   * one commits or rolls back).
   */
  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING, DummyValue.BUFFER, 24] })
  async claimIdempotencyKey(
    scope: string,
    key: string,
    requestHash: Buffer,
    ttlHours: number,
    tx?: Tx,
  ): Promise<boolean> {
    const rows = await this.db.rows(
      sql`
      INSERT INTO idempotency_keys (scope, key, request_hash) VALUES (${scope}, ${key}, ${requestHash})
      ON CONFLICT (scope, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = now()
       WHERE idempotency_keys.created_at < now() - make_interval(hours => ${ttlHours})
      RETURNING key`,
      tx,
    );
    return rows.length > 0;
  }

  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING] })
  async idempotencyKey(scope: string, key: string, tx?: Tx): Promise<IdempotencyRow | null> {
    return this.db.one<IdempotencyRow>(
      sql`
      SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE scope = ${scope} AND key = ${key}`,
      tx,
    );
  }

  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING, 200, { ok: true }] })
  async recordIdempotentResponse(scope: string, key: string, status: number, body: unknown, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      UPDATE idempotency_keys SET response_status = ${status}, response_body = ${JSON.stringify(body)}::jsonb
       WHERE scope = ${scope} AND key = ${key}`,
      tx,
    );
  }

  /**
   * Retention (src/retention): deletes up to `batch` keys older than `ttlHours` (they are
   * never replayed again); how many went.
   */
  @GenerateSql({ params: [24, 500] })
  async pruneIdempotencyKeys(ttlHours: number, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM idempotency_keys WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${ttlHours}::int)
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}
