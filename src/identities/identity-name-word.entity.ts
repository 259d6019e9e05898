import { Entity, PrimaryColumn } from 'typeorm';

/**
 * The names' lexicon (docs/api.md §4, "How a search is read"): a word of a card's names
 * and its lexeme, looked up by trigrams when a name is misspelt or partial. Kept by
 * triggers on `identities` (migration 1796530000000); read by RankedSearchRepository,
 * never written by the service.
 */
@Entity({ name: 'identity_name_words' })
export class IdentityNameWord {
  @PrimaryColumn({ type: 'text' })
  word: string;

  @PrimaryColumn({ type: 'text' })
  lexeme: string;
}
