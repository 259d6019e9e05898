import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Logger } from 'pino';
import { APP_CONFIG, ConfigError, readCardSigningKey, type AppConfig } from '../config/config';
import { publicKeyFromJwk } from '../common/jwk';
import { signJws, signJwt, type JwtClaims } from '../common/jwt';
import { LOGGER } from '../common/tokens';
import { canonicalCardPayload } from './card-canonical';
import type { CardSigningAlgorithm, CardSigningKeySource } from './card-signing-key.entity';
import { Database, type Tx } from '../database/database';
import { DirectoryRepository, type CardSigningKeyRecord } from './directory.repository';
import type { CardSignature } from './agent-card';

type Algorithm = CardSigningAlgorithm;

interface SigningKey {
  kid: string;
  alg: Algorithm;
  key: KeyObject;
}

/** A public key as `/.well-known/jwks.json` lists it. */
export type PublicJwk = JsonWebKey & { kid: string; alg: Algorithm; use: 'sig' };

/** How long an instance signs with the key it read before asking the database again (a rotation elsewhere reaches it by then). */
const KEY_REFRESH_MS = 30_000;
/** How often, at most, a token naming a key id this instance does not know makes it read the published keys again. */
const UNKNOWN_KID_REFRESH_MS = 1_000;
/**
 * Signatures kept per (key, payload), the least recently served dropped first: cards are
 * signed once per change, not per request. A signature costs ~60 µs to make (canonical form
 * and ECDSA) and ~0.5 KB to keep: 20,000 hold 400 directory pages of 50 cards (~10 MB); at
 * 2,000, sixty one-word searches in turn re-signed every card of every page
 * (docs/performance.md, "Signed cards, signed once").
 */
export const SIGNATURE_CACHE_SIZE = 20_000;

/**
 * Signs Agent Cards (docs/api.md §4; A2A v1.0 §8.4): a JWS (flattened JSON
 * serialization, detached payload) over the card's canonical form
 * (card-canonical.ts), protected header `{alg, kid, typ: "JOSE", jku}`, the service
 * attesting as the cards' provider. The public keys are served at
 * `/.well-known/jwks.json`: the current one and the one before it.
 *
 * The key: CARD_SIGNING_KEY_FILE (a PEM private key, P-256 → ES256 or Ed25519 →
 * EdDSA) when configured — a changed file is a rotation, noticed at start. Otherwise
 * the service generates a P-256 key at first start and keeps it in the database
 * (`card_signing_keys`), a development convenience: whoever reads the database can
 * sign cards. `npm run cli -- rotate-card-key` replaces a generated key.
 *
 * The same key signs the service's OAuth access tokens (docs/api.md §17: JWTs, `typ`
 * `at+jwt`, so neither can pass for the other), and verifies them from memory: the
 * published keys are read again only for a key id not met before, at most once a second.
 */
@Injectable()
export class CardSigner implements OnModuleInit {
  private fileKey: SigningKey | null = null;
  private cached: { key: SigningKey; readAt: number } | null = null;
  private readonly signatures = new Map<string, CardSignature>();
  private readonly jku: string;
  /** The published public keys by kid (current and previous), and when they were read. */
  private published: { keys: Map<string, { key: KeyObject; alg: Algorithm }>; readAt: number } | null = null;
  /** The read of the published keys under way: requests that need them meanwhile share it. */
  private publishedRead: Promise<Map<string, { key: KeyObject; alg: Algorithm }>> | null = null;

  constructor(
    private readonly db: Database,
    private readonly repository: DirectoryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.jku = `${config.publicBaseUrl}/.well-known/jwks.json`;
  }

  async onModuleInit(): Promise<void> {
    if (this.config.cardSigningKeyFile) {
      this.fileKey = await loadKeyFile(this.config.cardSigningKeyFile);
    }
    const key = await this.db.transaction(async (tx) => {
      await this.repository.lockSigningKeys(tx);
      const current = await this.repository.currentSigningKey(tx);
      if (this.fileKey) {
        if (current?.kid !== this.fileKey.kid) {
          await this.install(tx, this.fileKey, 'file');
        }
        return this.fileKey;
      }
      // A generated key, kept; a file key that is no longer configured is replaced.
      if (current?.privateKeyPem) {
        return fromRecord(current);
      }
      return this.install(tx, await generateKey(), 'generated');
    });
    this.cached = { key, readAt: Date.now() };
    this.logger.debug(
      { kid: key.kid, alg: key.alg, source: this.fileKey ? 'file' : 'generated' },
      'agent card signing key ready',
    );
  }

  /**
   * A new generated key becomes current; the current one stays listed as previous.
   * Refused while CARD_SIGNING_KEY_FILE is configured: then the file is the key.
   */
  async rotate(): Promise<{ kid: string; previous: string | null }> {
    if (this.config.cardSigningKeyFile) {
      throw new ConfigError('CARD_SIGNING_KEY_FILE is configured: rotate by replacing that file and restarting');
    }
    return this.db.transaction(async (tx) => {
      await this.repository.lockSigningKeys(tx);
      const previous = await this.repository.currentSigningKey(tx);
      const key = await this.install(tx, await generateKey(), 'generated');
      this.cached = { key, readAt: Date.now() };
      this.published = null;
      this.publishedRead = null;
      return { kid: key.kid, previous: previous?.kid ?? null };
    });
  }

  /** The current key's id (it takes part in the cards' ETags). */
  async currentKid(): Promise<string> {
    return (await this.signingKey()).kid;
  }

  /** The card with its `signatures`: one signature by the current key. */
  async sign<T extends object>(card: T): Promise<T & { signatures: CardSignature[] }> {
    const key = await this.signingKey();
    // Looked up by the card as built (JSON.stringify and the hash are native): a card signed
    // before costs no canonical form, which is most of signing's time once signatures are kept
    // (a directory page canonicalized every card of it on every request).
    const cacheKey = `${key.kid}\0${createHash('sha256').update(JSON.stringify(card)).digest('base64url')}`;
    let signature = this.signatures.get(cacheKey);
    if (signature) {
      // Re-inserted last: the least recently served go first.
      this.signatures.delete(cacheKey);
      this.signatures.set(cacheKey, signature);
    } else {
      signature = signJws(
        { alg: key.alg, kid: key.kid, typ: 'JOSE', jku: this.jku },
        canonicalCardPayload(card),
        key.key,
      );
      if (this.signatures.size >= SIGNATURE_CACHE_SIZE) {
        this.signatures.delete(this.signatures.keys().next().value!);
      }
      this.signatures.set(cacheKey, signature);
    }
    return { ...card, signatures: [signature] };
  }

  /** An access token (docs/api.md §17): `claims` signed by the current key, header `{alg, kid, typ: "at+jwt"}`. */
  async signToken(claims: JwtClaims): Promise<string> {
    const key = await this.signingKey();
    return signJwt({ alg: key.alg, kid: key.kid, typ: 'at+jwt' }, claims, key.key);
  }

  /**
   * The public key `kid` among those published (current, previous), from memory; a kid
   * not known makes it read them again, at most once every UNKNOWN_KID_REFRESH_MS (a key
   * rotated on another instance), and so does a list older than KEY_REFRESH_MS (a key
   * retired elsewhere stops verifying by then). Null: no such published key.
   */
  async verificationKey(kid: string): Promise<{ key: KeyObject; alg: Algorithm } | null> {
    const age = this.published ? Date.now() - this.published.readAt : Infinity;
    const known = this.published?.keys.get(kid);
    if ((known && age < KEY_REFRESH_MS) || (!known && age < UNKNOWN_KID_REFRESH_MS)) {
      return known ?? null;
    }
    return (await this.readPublished()).get(kid) ?? null;
  }

  /** Reads the published keys again; requests arriving while it runs share the one read. */
  private readPublished(): Promise<Map<string, { key: KeyObject; alg: Algorithm }>> {
    if (!this.publishedRead) {
      const read = this.repository.publishedSigningKeys().then((rows) => {
        const keys = new Map(
          rows.flatMap((row) => {
            const key = publicKeyFromJwk(row.publicJwk, [row.algorithm]);
            return key ? [[row.kid, { key, alg: row.algorithm }] as const] : [];
          }),
        );
        this.published = { keys, readAt: Date.now() };
        return keys;
      });
      const shared = read.finally(() => {
        if (this.publishedRead === shared) {
          this.publishedRead = null;
        }
      });
      this.publishedRead = shared;
    }
    return this.publishedRead;
  }

  /** The keys a verifier may meet: the current one, then the previous one. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const rows = await this.repository.publishedSigningKeys();
    return { keys: rows.map((key) => ({ ...key.publicJwk, kid: key.kid, alg: key.algorithm, use: 'sig' })) };
  }

  private async signingKey(): Promise<SigningKey> {
    if (this.fileKey) {
      return this.fileKey;
    }
    if (this.cached && Date.now() - this.cached.readAt < KEY_REFRESH_MS) {
      return this.cached.key;
    }
    const current = await this.repository.currentSigningKey();
    // Until a generated key is current again (it always is, after start), keep signing with the last one read.
    const key = current?.privateKeyPem ? fromRecord(current) : this.cached!.key;
    this.cached = { key, readAt: Date.now() };
    return key;
  }

  /** `key` becomes current: the current key becomes previous, the previous one retired. */
  private async install(tx: Tx, key: SigningKey, source: CardSigningKeySource): Promise<SigningKey> {
    const publicJwk = createPublicKey(key.key).export({ format: 'jwk' });
    const privateKeyPem = source === 'generated' ? (key.key.export({ format: 'pem', type: 'pkcs8' }) as string) : null;
    await this.repository.installSigningKey({ kid: key.kid, algorithm: key.alg, publicJwk, privateKeyPem, source }, tx);
    return key;
  }
}

function fromRecord(record: CardSigningKeyRecord): SigningKey {
  return { kid: record.kid, alg: record.algorithm, key: createPrivateKey(record.privateKeyPem!) };
}

function generateKey(): Promise<SigningKey> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return withKid({ alg: 'ES256', key: privateKey });
}

/** The key's id: its RFC 7638 JWK thumbprint, so the same key always has the same id. */
async function withKid(key: Omit<SigningKey, 'kid'>): Promise<SigningKey> {
  const jwk = createPublicKey(key.key).export({ format: 'jwk' }) as JWK;
  return { ...key, kid: await calculateJwkThumbprint(jwk, 'sha256') };
}

/** The configured key file (loadConfig has already checked it). */
function loadKeyFile(path: string): Promise<SigningKey> {
  return withKid(readCardSigningKey(path));
}
