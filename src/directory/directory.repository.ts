import { Injectable } from '@nestjs/common';
import type { JsonWebKey } from 'node:crypto';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql } from '../database/sql';
import type { CardSigningAlgorithm, CardSigningKey, CardSigningKeySource } from './card-signing-key.entity';

/** A signing key as the directory's reads return it. */
export type CardSigningKeyRecord = RecordOf<CardSigningKey>;

const KEY_COLUMNS = sql.raw(
  `kid, algorithm, public_jwk AS "publicJwk", private_key_pem AS "privateKeyPem", source, status,
  created_at AS "createdAt", retired_at AS "retiredAt"`,
);

/** A key becoming current. */
export interface InstalledCardKey {
  kid: string;
  algorithm: CardSigningAlgorithm;
  publicJwk: JsonWebKey;
  /** Generated keys only. */
  privateKeyPem: string | null;
  source: CardSigningKeySource;
}

/** Every statement on the directory's own table, `card_signing_keys`. */
@Injectable()
export class DirectoryRepository {
  constructor(private readonly db: Database) {}

  /** One writer at a time decides which key is current (instances starting together); held until `tx` ends. */
  @GenerateSql({ params: [] })
  async lockSigningKeys(tx?: Tx): Promise<void> {
    await this.db.execute(sql`LOCK TABLE card_signing_keys IN SHARE ROW EXCLUSIVE MODE`, tx);
  }

  /** The key that signs now, or null before the first start. */
  @GenerateSql({ params: [] })
  async currentSigningKey(tx?: Tx): Promise<CardSigningKeyRecord | null> {
    return this.db.one<CardSigningKeyRecord>(
      sql`SELECT ${KEY_COLUMNS} FROM card_signing_keys WHERE status = 'current'`,
      tx,
    );
  }

  /** The keys a verifier may meet: the current one, then the previous one. */
  @GenerateSql({ params: [] })
  async publishedSigningKeys(): Promise<Array<Pick<CardSigningKeyRecord, 'kid' | 'algorithm' | 'publicJwk'>>> {
    return this.db.rows(
      sql`SELECT kid, algorithm, public_jwk AS "publicJwk" FROM card_signing_keys WHERE status IN ('current', 'previous') ORDER BY status = 'current' DESC`,
    );
  }

  /** `key` becomes current: the current key becomes previous, the previous one retired. */
  @GenerateSql({
    params: [
      {
        kid: DummyValue.STRING,
        algorithm: 'ES256',
        publicJwk: { kty: 'EC' },
        privateKeyPem: null,
        source: 'file',
      } satisfies InstalledCardKey,
    ],
  })
  async installSigningKey(key: InstalledCardKey, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`UPDATE card_signing_keys SET status = 'retired', retired_at = now() WHERE status = 'previous' AND kid <> ${key.kid}`,
      tx,
    );
    await this.db.execute(
      sql`UPDATE card_signing_keys SET status = 'previous' WHERE status = 'current' AND kid <> ${key.kid}`,
      tx,
    );
    await this.db.execute(
      sql`
      INSERT INTO card_signing_keys (kid, algorithm, public_jwk, private_key_pem, source, status)
      VALUES (${key.kid}, ${key.algorithm}, ${JSON.stringify(key.publicJwk)}, ${key.privateKeyPem}, ${key.source}, 'current')
      ON CONFLICT (kid) DO UPDATE SET status = 'current', retired_at = NULL`,
      tx,
    );
  }
}
