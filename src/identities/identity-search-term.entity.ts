import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The public directory's word index (docs/api.md §4, "How a search is read"): one word
 * (lexeme) of a publicly listed card, with the weightiest class of fields holding it.
 * Kept by triggers on `identities` (migration 1796520000000); read by
 * RankedSearchRepository, never written by the service.
 */
@Entity({ name: 'identity_search_terms' })
export class IdentitySearchTerm {
  @PrimaryColumn({ name: 'identity_id', type: 'uuid' })
  identityId: string;

  @PrimaryColumn({ type: 'text' })
  lexeme: string;

  /** 4: handle, display name or a skill's name; 3: a skill's id or tag; 2: a skill's description or example; 1: the description. */
  @Column({ type: 'smallint' })
  weight: number;

  /** The card's creation time: newest first among equal weights. */
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
