import { Injectable } from '@nestjs/common';
import type { PageQuery } from '../common/pagination';
import {
  IdentitiesRepository,
  type IdentityPage,
  type OrganizationFilters,
  type PublicFilters,
} from './identities.repository';

export { WALK_LIMIT, type IdentityPage } from './identities.repository';

export interface PublicListing extends PageQuery, PublicFilters {}

export interface OrganizationListing extends PageQuery, OrganizationFilters {}

/**
 * The directories' listings: keyset pagination over (created_at DESC, id DESC) and
 * indexed filters, so a page costs about the same at any depth and table size
 * (the statements and the choice between them: IdentitiesRepository.listPublic).
 */
@Injectable()
export class IdentitySearchService {
  constructor(private readonly identities: IdentitiesRepository) {}

  /** The public directory: `q` over handle, name, description and skills; `skill`; `tag`. */
  listPublic(query: PublicListing): Promise<IdentityPage> {
    return this.identities.listPublic(
      { q: query.q, skill: query.skill, tag: query.tag },
      { limit: query.limit, cursor: query.cursor },
    );
  }

  /** Every identity of one organization, whatever its state, optionally filtered. */
  listForOrganization(organizationId: string, query: OrganizationListing): Promise<IdentityPage> {
    const { q, enabled, claimed, status } = query;
    return this.identities.listForOrganization(
      organizationId,
      { q, enabled, claimed, status },
      { limit: query.limit, cursor: query.cursor },
    );
  }
}
