import type { JsonWebKey } from 'node:crypto';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type CardSigningAlgorithm = 'ES256' | 'EdDSA';
export type CardSigningKeySource = 'generated' | 'file';
export type CardSigningKeyStatus = 'current' | 'previous' | 'retired';

/** A key that signs served Agent Cards (card-signer.ts): one current, at most one previous, older ones retired. */
@Entity({ name: 'card_signing_keys' })
export class CardSigningKey {
  /** The RFC 7638 JWK thumbprint of the public key. */
  @PrimaryColumn({ type: 'text' })
  kid: string;

  @Column({ type: 'text' })
  algorithm: CardSigningAlgorithm;

  @Column({ name: 'public_jwk', type: 'jsonb' })
  publicJwk: JsonWebKey;

  /** Generated keys only; a key from CARD_SIGNING_KEY_FILE is recorded by its public half. */
  @Column({ name: 'private_key_pem', type: 'text', nullable: true })
  privateKeyPem: string | null;

  @Column({ type: 'text' })
  source: CardSigningKeySource;

  @Column({ type: 'text' })
  status: CardSigningKeyStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true })
  retiredAt: Date | null;
}
