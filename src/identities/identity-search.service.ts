import { Injectable } from '@nestjs/common';
import type { PageQuery } from '../common/pagination';
import {
  IdentitiesRepository,
  type IdentityPage,
  type OrganizationFilters,
  type PublicFilters,
} from './identities.repository';
import { RankedSearchRepository, searchWords } from './ranked-search.repository';

export { WALK_LIMIT, type IdentityPage } from './identities.repository';

export interface PublicListing extends PageQuery, PublicFilters {}

export interface OrganizationListing extends PageQuery, OrganizationFilters {}

/**
 * The directories' listings. With a search (`q` holding a word) the page is ranked by
 * relevance (RankedSearchRepository, docs/api.md §4 "Ranked search"); without one,
 * newest first: keyset pagination over (created_at DESC, id DESC) and indexed
 * filters, so a page costs about the same at any depth and table size (the
 * statements and the choice between them: IdentitiesRepository.listPublic).
 */
@Injectable()
export class IdentitySearchService {
  constructor(
    private readonly identities: IdentitiesRepository,
    private readonly ranked: RankedSearchRepository,
  ) {}

  /** The public directory: `q` over handle, name, description and public skills, ranked; filters. */
  listPublic(query: PublicListing): Promise<IdentityPage> {
    const { q, skill, tag, inputMode, outputMode, organizationIds } = query;
    const filters = { skill, tag, inputMode, outputMode, organizationIds };
    const page = { limit: query.limit, cursor: query.cursor };
    return q && searchWords(q).length > 0
      ? this.ranked.listPublic({ ...filters, q }, page)
      : this.identities.listPublic(filters, page);
  }

  /** Every identity of one organization, whatever its state, optionally filtered; ranked when searched. */
  listForOrganization(organizationId: string, query: OrganizationListing): Promise<IdentityPage> {
    const { q, enabled, claimed, status, skill, tag, inputMode, outputMode } = query;
    const filters = { enabled, claimed, status, skill, tag, inputMode, outputMode };
    const page = { limit: query.limit, cursor: query.cursor };
    return q && searchWords(q).length > 0
      ? this.ranked.listForOrganization(organizationId, { ...filters, q }, page)
      : this.identities.listForOrganization(organizationId, filters, page);
  }

  /** When any identity last changed: a bound on when any listing last changed. */
  lastChange(): Promise<Date | null> {
    return this.identities.lastChange();
  }
}
