import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { PageQuery } from '../common/pagination';
import {
  IdentitiesRepository,
  type AvailabilityRule,
  type IdentityPage,
  type OrganizationFilters,
  type PublicFilters,
} from './identities.repository';
import { RankedSearchRepository, searchWords } from './ranked-search.repository';

export { WALK_LIMIT, type IdentityPage } from './identities.repository';

export interface PublicListing extends PageQuery, Omit<PublicFilters, 'available'> {
  available?: boolean;
}

export interface OrganizationListing extends PageQuery, Omit<OrganizationFilters, 'available'> {
  available?: boolean;
}

/**
 * The directories' listings. With a search (`q` holding a word) the page is ranked by
 * relevance (RankedSearchRepository, docs/api.md §4 "Ranked search"); without one,
 * newest first: keyset pagination over (created_at DESC, id DESC) and indexed
 * filters, so a page costs about the same at any depth and table size (the
 * statements and the choice between them: IdentitiesRepository.listPublic).
 */
@Injectable()
export class IdentitySearchService {
  private readonly rule: AvailabilityRule;

  constructor(
    private readonly identities: IdentitiesRepository,
    private readonly ranked: RankedSearchRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rule = config.availability;
  }

  /** The public directory: `q` over handle, name, description and public skills, ranked; filters. */
  listPublic(query: PublicListing): Promise<IdentityPage> {
    const { q, skill, tag, inputMode, outputMode, organizationIds } = query;
    const filters = { skill, tag, inputMode, outputMode, organizationIds, available: this.availability(query) };
    const page = { limit: query.limit, cursor: query.cursor };
    return q && searchWords(q).length > 0
      ? this.ranked.listPublic({ ...filters, q }, page)
      : this.identities.listPublic(filters, page);
  }

  /** Every identity of one organization, whatever its state, optionally filtered; ranked when searched. */
  listForOrganization(organizationId: string, query: OrganizationListing): Promise<IdentityPage> {
    const { q, enabled, claimed, status, skill, tag, inputMode, outputMode } = query;
    const filters = {
      enabled,
      claimed,
      status,
      skill,
      tag,
      inputMode,
      outputMode,
      available: this.availability(query),
    };
    const page = { limit: query.limit, cursor: query.cursor };
    return q && searchWords(q).length > 0
      ? this.ranked.listForOrganization(organizationId, { ...filters, q }, page)
      : this.identities.listForOrganization(organizationId, filters, page);
  }

  /** Of `ids`, those unavailable now (docs/api.md §4, "Availability"). */
  unavailableAmong(ids: readonly string[]): Promise<Set<string>> {
    return this.identities.unavailableAmong(ids, this.rule);
  }

  private availability(query: { available?: boolean }) {
    return query.available === undefined ? undefined : { available: query.available, rule: this.rule };
  }

  /** When any identity last changed: a bound on when any listing last changed. */
  lastChange(): Promise<Date | null> {
    return this.identities.lastChange();
  }
}
