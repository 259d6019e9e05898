import { Inject, Injectable } from '@nestjs/common';
import { AgentCard } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { notFound } from '../common/app-error';
import type { Tagged } from '../common/conditional-get';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { Principal } from '../common/principal';
import { ConsoleService } from '../console/console.service';
import { IdentitiesService, isServable } from '../identities/identities.service';
import { IdentitySearchService, type IdentityPage } from '../identities/identity-search.service';
import { cardUrl, toIdentityView, type IdentityView } from '../identities/identity.view';
import type { Identity } from '../identities/identity.entity';
import {
  cardETag,
  MODES,
  toCard,
  toV1Card,
  type AgentCardJson,
  type CardGeneration,
  type V1AgentCard,
} from './agent-card';
import type { SkillAudience } from '../identities/card-skills';
import { CardSigner } from './card-signer';
import type { CardPreviewView } from './card-preview.view';
import {
  AI_CATALOG_MEDIA_TYPE,
  AI_CATALOG_PAGE_SIZE,
  catalogETag,
  toAiCatalog,
  type AiCatalogDocument,
} from './ai-catalog';
import type { CardFiltersQuery } from './dto/card-filters.query';
import type { OrganizationDirectoryQuery } from './dto/organization-directory.query';
import type { PublicDirectoryQuery } from './dto/public-directory.query';

/** A public directory entry (docs/api.md §4). */
export interface DirectoryEntry {
  agent_handle: string;
  availability: 'available' | 'unavailable';
  card: AgentCardJson;
}

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
    private readonly signer: CardSigner,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.baseUrl = config.publicBaseUrl;
    this.grpcAddress = config.grpcPublicAddress;
  }

  /**
   * The card of a claimed, enabled, non-deleted identity, whatever its directory
   * visibility (docs/api.md §4: a card is served while its identity is claimed, enabled and not deleted), in the requested generation, signed; anything
   * else is a 404. Public skills only.
   */
  async card(handle: string, generation: CardGeneration): Promise<Tagged<AgentCardJson>> {
    const identity = await this.identities.findServable(handle);
    if (!identity) {
      throw notFound('agent_not_found', 'No enabled, claimed agent has that handle.');
    }
    const [unsigned] = await this.cards([identity], generation, 'public');
    return {
      body: await this.signer.sign(unsigned),
      etag: cardETag(unsigned, generation, await this.signer.currentKid()),
    };
  }

  /**
   * The extended card (A2A `GetExtendedAgentCard`): the worker's v1.0 card with its
   * `admitted` skills too — those `admits` (the caller's admission to each, docs/api.md
   * §16) — for a caller that has passed the protocol's checks. For a
   * v0.3 caller the SDK's v0.3 transport translates this card; its signature then
   * covers that translation — exactly what the caller receives — rather than the v1.0
   * form, so it verifies in both generations.
   */
  async extendedCard(
    identity: Identity,
    generation: CardGeneration,
    admits: (skillId: string) => boolean,
  ): Promise<V1AgentCard> {
    const names = await this.console.organizationNames([identity.organizationId!]);
    const unsigned = toV1Card({
      identity,
      organizationName: names.get(identity.organizationId!) ?? '',
      baseUrl: this.baseUrl,
      audience: 'admitted',
      admits,
      grpcAddress: this.grpcAddress,
    });
    if (generation === '1.0') {
      return this.signer.sign(unsigned);
    }
    const { signatures } = await this.signer.sign(await asV03ExtendedCard(unsigned));
    return { ...unsigned, signatures };
  }

  /**
   * The card `card` serves for the identity — or would serve once it is claimed, enabled
   * and not deleted — in both generations, unsigned: a preview for its organization
   * (docs/api.md §4, "Card preview"). Public skills only, as served.
   */
  async cardPreview(principal: Principal, handle: string): Promise<CardPreviewView> {
    const identity = await this.identities.readable(principal, handle);
    // One read of the organization's name for both generations.
    const names = await this.console.organizationNames([identity.organizationId!]);
    const source = this.cardSource(identity, names, 'public');
    return {
      agent_handle: identity.agentHandle,
      served: isServable(identity),
      card_url: cardUrl(this.baseUrl, identity.agentHandle),
      cards: { '1.0': toCard(source, '1.0'), '0.3': toCard(source, '0.3') },
    };
  }

  /** The public directory; each entry's card in the requested generation (as the card endpoint), signed, public skills only. */
  async publicDirectory(
    query: PublicDirectoryQuery,
    generation: CardGeneration,
  ): Promise<{ agents: DirectoryEntry[]; next_cursor: string | null }> {
    const page = await this.publicPage(query);
    const [cards, availability] = await Promise.all([
      this.cards(page.items, generation, 'public').then((unsigned) =>
        Promise.all(unsigned.map((card) => this.signer.sign(card))),
      ),
      this.availabilityOf(page.items, query.available),
    ]);
    return {
      agents: page.items.map((identity, i) => ({
        agent_handle: identity.agentHandle,
        availability: availability(identity),
        card: cards[i],
      })),
      next_cursor: page.nextCursor,
    };
  }

  /** One page of the public directory as an AI Catalog document (docs/api.md §4, "AI Catalog"). */
  async aiCatalog(cursor: string | undefined): Promise<Tagged<AiCatalogDocument>> {
    const [page, lastChange] = await Promise.all([
      this.search.listPublic({ limit: AI_CATALOG_PAGE_SIZE, cursor }),
      this.search.lastChange(),
    ]);
    const body = toAiCatalog(this.baseUrl, page.items, page.nextCursor);
    return {
      body,
      etag: catalogETag(body),
      ...(lastChange ? { lastModified: lastChange } : {}),
      contentType: AI_CATALOG_MEDIA_TYPE,
    };
  }

  /** Every identity of the caller's organization (an agent key's is its identity's; the surface requires it claimed). */
  async organizationDirectory(
    principal: Principal,
    query: OrganizationDirectoryQuery,
  ): Promise<{ identities: IdentityView[]; next_cursor: string | null }> {
    const page = await this.search.listForOrganization(principal.organizationId!, {
      ...cardListing(query),
      enabled: query.enabled,
      claimed: query.claimed,
      status: query.status,
    });
    return {
      identities: page.items.map((identity) => toIdentityView(identity, this.baseUrl)),
      next_cursor: page.nextCursor,
    };
  }

  /**
   * The public directory's page: the filters on what the service serves (binding,
   * protocol generation: the same for every agent) and the organization's name are
   * answered here; the rest by the search.
   */
  private async publicPage(query: PublicDirectoryQuery): Promise<IdentityPage> {
    if (query.binding === 'GRPC' && !this.grpcAddress) {
      return { items: [], nextCursor: null };
    }
    let organizationIds: string[] | undefined;
    if (query.organization !== undefined) {
      organizationIds = await this.console.organizationIdsNamed(query.organization);
      if (organizationIds.length === 0) {
        return { items: [], nextCursor: null };
      }
    }
    return this.search.listPublic({ ...cardListing(query), organizationIds });
  }

  /**
   * Each listed identity's availability: one query for the page, or none when the page was
   * filtered by it (`available`), every entry then being what the filter asked for.
   */
  private async availabilityOf(
    identities: Identity[],
    filtered: boolean | undefined,
  ): Promise<(identity: Identity) => DirectoryEntry['availability']> {
    if (filtered !== undefined) {
      return () => (filtered ? 'available' : 'unavailable');
    }
    const unavailable = await this.search.unavailableAmong(identities.map((identity) => identity.id));
    return (identity) => (unavailable.has(identity.id) ? 'unavailable' : 'available');
  }

  /** Unsigned cards for served identities, with their organizations' names in one query. */
  private async cards(
    identities: Identity[],
    generation: CardGeneration,
    audience: SkillAudience,
  ): Promise<AgentCardJson[]> {
    const names = await this.console.organizationNames(identities.map((identity) => identity.organizationId!));
    return identities.map((identity) => toCard(this.cardSource(identity, names, audience), generation));
  }

  /** What a card of `identity` is made from, its organization's name among `names`. */
  private cardSource(identity: Identity, names: Map<string, string>, audience: SkillAudience) {
    return {
      identity,
      organizationName: names.get(identity.organizationId!) ?? '',
      baseUrl: this.baseUrl,
      audience,
      grpcAddress: this.grpcAddress,
    };
  }
}

/** The search and card filters of a directory query; a default mode of every card filters nothing. */
function cardListing(query: CardFiltersQuery) {
  const mode = (value: string | undefined) =>
    value === undefined || MODES.includes(value.toLowerCase()) ? undefined : value;
  return {
    q: query.q,
    skill: query.skill,
    tag: query.tag,
    inputMode: mode(query.input_mode),
    outputMode: mode(query.output_mode),
    available: query.available,
    limit: query.limit,
    cursor: query.cursor,
  };
}

/**
 * What `@a2a-js/sdk`'s v0.3 JSON-RPC transport makes of a v1.0 extended card
 * (`agent/getAuthenticatedExtendedCard`): the SDK's own translation, asked of a
 * transport over a handler that only knows this card.
 */
async function asV03ExtendedCard(card: V1AgentCard): Promise<object> {
  const core = AgentCard.fromJSON(card);
  const only = {
    getAgentCard: async () => core,
    getAuthenticatedExtendedAgentCard: async () => core,
  } as unknown as A2ARequestHandler;
  const response = (await new LegacyJsonRpcTransportHandler(only).handle(
    { jsonrpc: '2.0', id: 0, method: 'agent/getAuthenticatedExtendedCard' },
    new ServerCallContext(),
  )) as { result?: object };
  if (!response.result) {
    throw new Error('the SDK did not translate the extended card');
  }
  return response.result;
}
