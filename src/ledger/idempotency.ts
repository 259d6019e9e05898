import { createHash } from 'node:crypto';
import { createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AppError, badRequest } from '../common/app-error';
import type { Tx } from '../database/database';
import { IdempotencyRepository } from './idempotency.repository';

/** How long a key's first response is replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;
const KEY = /^[\x21-\x7e]{1,255}$/;

export type Claim = { replay: { status: number; body: unknown } } | { replay: null };

/**
 * `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header). The key is
 * claimed inside the request's own transaction, by inserting it: a concurrent request
 * with the same key waits on the unique index until the first one commits, then
 * replays its response; if the first one failed and rolled back, the key was never
 * recorded and the second one runs. So only successful responses are kept, and
 * nothing is applied twice. The same key with a different request → 422.
 */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly repository: IdempotencyRepository) {}

  /** Validates the header's value; undefined when the request carries none. */
  static parseKey(raw: string | string[] | undefined): string | undefined {
    if (raw === undefined) {
      return undefined;
    }
    if (typeof raw !== 'string' || !KEY.test(raw)) {
      throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
    }
    return raw;
  }

  /** A hash of what makes two requests "the same": the target and the canonical JSON body. */
  static hash(target: string, body: unknown): Buffer {
    return createHash('sha256')
      .update(`${target}\n${canonicalJson(body)}`)
      .digest();
  }

  async claim(tx: Tx, scope: string, key: string, requestHash: Buffer): Promise<Claim> {
    if (await this.repository.claimIdempotencyKey(scope, key, requestHash, IDEMPOTENCY_TTL_HOURS, tx)) {
      return { replay: null };
    }
    const row = (await this.repository.idempotencyKey(scope, key, tx))!;
    if (!Buffer.from(row.request_hash).equals(requestHash)) {
      throw new AppError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request.',
      );
    }
    return { replay: { status: row.response_status!, body: row.response_body } };
  }

  async record(tx: Tx, scope: string, key: string, status: number, body: unknown): Promise<void> {
    await this.repository.recordIdempotentResponse(scope, key, status, body, tx);
  }
}

/** JSON with object keys sorted, so that key order does not make two bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The request's `Idempotency-Key`, validated; undefined when absent. */
export const IdempotencyKeyHeader = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined =>
  IdempotencyStore.parseKey(ctx.switchToHttp().getRequest<Request>().headers['idempotency-key']),
);
