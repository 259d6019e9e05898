import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '../common/app-error';
import type { Tagged } from '../common/conditional-get';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { Principal } from '../auth/principal';
import { ConsoleService } from '../console/console.service';
import { IdentitiesService } from '../identities/identities.service';
import { IdentitySearchService } from '../identities/identity-search.service';
import { toIdentityView, type IdentityView } from '../identities/identity-view';
import type { Identity } from '../identities/identity.entity';
import { cardETag, toAgentCard, type AgentCardJson } from './agent-card';
import type { OrganizationDirectoryQuery } from './dto/organization-directory.query';
import type { PublicDirectoryQuery } from './dto/public-directory.query';

/**
 * Discovery: Agent Cards, the public directory and the organization directory.
 * Identity state is read on every request (never cached here), so enabling,
 * disabling and deleting take effect on the next request.
 */
@Injectable()
export class DirectoryService {
  private readonly baseUrl: string;
  private readonly grpcAddress: string | null;

  constructor(
    private readonly identities: IdentitiesService,
    private readonly search: IdentitySearchService,
    private readonly console: ConsoleService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.baseUrl = config.publicBaseUrl;
    this.grpcAddress = config.grpcPublicAddress;
  }

  /**
   * The card of a claimed, enabled, non-deleted identity, whatever its directory
   * visibility (SEED-SPEC §5 rule 3); anything else is a 404.
   */
  async card(handle: string): Promise<Tagged<AgentCardJson>> {
    const identity = await this.identities.findServable(handle);
    if (!identity) throw notFound('agent_not_found', 'No enabled, claimed agent has that handle.');
    const [card] = await this.cards([identity]);
    return { body: card, etag: cardETag(card) };
  }

  async publicDirectory(query: PublicDirectoryQuery): Promise<{ agents: Array<{ agent_handle: string; card: AgentCardJson }>; next_cursor: string | null }> {
    const page = await this.search.listPublic(query);
    const cards = await this.cards(page.items);
    return {
      agents: page.items.map((identity, i) => ({ agent_handle: identity.agentHandle, card: cards[i] })),
      next_cursor: page.nextCursor,
    };
  }

  /** Every identity of the caller's organization (an agent key's is its identity's; the surface requires it claimed). */
  async organizationDirectory(principal: Principal, query: OrganizationDirectoryQuery): Promise<{ identities: IdentityView[]; next_cursor: string | null }> {
    const page = await this.search.listForOrganization(principal.organizationId!, query);
    return { identities: page.items.map((identity) => toIdentityView(identity, this.baseUrl)), next_cursor: page.nextCursor };
  }

  /** Cards for served identities, with their organizations' names in one query. */
  private async cards(identities: Identity[]): Promise<AgentCardJson[]> {
    const names = await this.console.organizationNames(identities.map((identity) => identity.organizationId!));
    return identities.map((identity) => toAgentCard(identity, names.get(identity.organizationId!) ?? '', this.baseUrl, this.grpcAddress));
  }
}
