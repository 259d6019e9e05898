import { Inject, Injectable } from '@nestjs/common';
import { DefaultAgentCardResolver, type AgentCardResolverOptions } from '@a2a-js/sdk/client';
import type { AgentCard } from '@a2a-js/sdk';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { AppError, badRequest, notFound } from '../common/app-error';
import { parseTrustedKeys, verifyCard, type CardVerification, type PinnedKey } from './card-verification';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { checkDestinationUrl } from '../events/address-policy';
import { systemResolver } from '../events/delivery-sender';
import { CARD_LIMITS } from '../identities/dto/card-fields.dto';
import { MEDIA_TYPE, SKILL_LIMITS } from '../identities/dto/agent-skill.dto';
import { IdentitiesService } from '../identities/identities.service';
import type { IdentityView } from '../identities/identity.view';
import { Database, type Tx } from '../database/database';
import { AuditService } from '../audit/audit.service';
import type { SetUpstreamDto } from './dto/set-upstream.dto';
import { configuredUpstreamFetch, reasonOf } from './upstream-fetch';
import { chooseInterface, interfaceUrl } from './upstream-interface';
import { currentTraceparent } from '../tracing/tracing';
import { UpstreamRepository, type ForwardHour, type UpstreamRecord } from './upstream.repository';
import { toUpstreamView, type UpstreamView } from './upstream.view';

export type { UpstreamRecord } from './upstream.repository';

/**
 * Upstream (bridged) identities, docs/api.md §14: an identity names an existing A2A agent,
 * and the forwarder delivers the identity's work to it. Who may do what follows the
 * identity's own rules (IdentitiesService): admin key or Console of its organization
 * set, remove and import; its own key may read, never the secret.
 */
@Injectable()
export class UpstreamsService {
  private readonly fetch: typeof fetch;

  constructor(
    private readonly repository: UpstreamRepository,
    private readonly identities: IdentitiesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    private readonly audit: AuditService,
  ) {
    this.fetch = configuredUpstreamFetch(config, systemResolver);
  }

  async get(principal: Principal, handle: string): Promise<UpstreamView> {
    const identity = await this.identities.readable(principal, handle);
    return toUpstreamView(await this.require(identity.id));
  }

  async set(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    handle: string,
    dto: SetUpstreamDto,
  ): Promise<UpstreamView> {
    const identity = await this.identities.readable(principal, handle);
    const allowPrivate = this.config.webhooksAllowPrivateNetworks;
    const url = checkDestinationUrl(dto.url, allowPrivate, 'invalid_upstream_url').toString();
    const cardUrl =
      dto.card_url === undefined
        ? null
        : checkDestinationUrl(dto.card_url, allowPrivate, 'invalid_upstream_url', 'card_url').toString();
    // The card decides what the request leaves open, and tells whether the upstream streams
    // (not read when the request names everything and no card: the upstream is then called without streaming).
    const named = dto.protocol_version !== undefined && dto.binding !== undefined;
    const read =
      named && !cardUrl
        ? null
        : await this.fetchCardOf(url, cardUrl).catch((error: unknown) => {
            if (named) {
              return null;
            }
            throw new AppError(
              422,
              'upstream_card_unreachable',
              `The upstream's Agent Card could not be read (${reasonOf(error)}); give protocol_version and binding, or a card_url that answers.`,
            );
          });
    const card = read?.card ?? null;
    const trust = await trustOf(dto, allowPrivate);
    const verification = read ? await this.verify(read.raw, trust) : null;
    const {
      binding,
      protocolVersion,
      url: offeredUrl,
    } = chooseInterface(card, {
      binding: dto.binding,
      protocolVersion: dto.protocol_version,
    });
    // The forwarder calls the chosen interface where the card says it is; `url` then shows that
    // endpoint, and `card_url` where the card was read (so that import-card reads it again).
    let endpoint = url;
    let readFrom = cardUrl;
    if (offeredUrl !== null) {
      const advertised = checkDestinationUrl(
        interfaceUrl(offeredUrl, binding, allowPrivate),
        allowPrivate,
        'invalid_upstream_url',
      ).toString();
      if (advertised !== url) {
        endpoint = advertised;
        readFrom = cardUrl ?? read!.from;
      }
    }
    const auth = dto.auth ?? { type: 'none' as const };
    return this.db.transaction(async (tx) => {
      const previous = await this.repository.upstreamOf(identity.id, tx);
      const record = await this.repository.setUpstream(
        {
          identityId: identity.id,
          url: endpoint,
          cardUrl: readFrom,
          protocolVersion,
          binding,
          streaming: card?.capabilities?.streaming === true,
          auth: {
            type: auth.type,
            header: auth.type === 'api_key' ? (auth.header ?? null) : null,
            value: auth.type === 'none' ? null : (auth.value ?? null),
          },
          trust,
          card: verification,
        },
        tx,
      );
      const view = toUpstreamView(record);
      await this.audit.record(tx, {
        organizationId: identity.organizationId,
        action: 'upstream.set',
        target: { type: 'upstream', id: identity.id, label: identity.agentHandle },
        before: previous ? toUpstreamView(previous) : null,
        after: view,
      });
      return view;
    });
  }

  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<void> {
    const identity = await this.identities.readable(principal, handle);
    await this.db.transaction(async (tx) => {
      const removed = await this.repository.removeUpstream(identity.id, tx);
      if (!removed) {
        throw upstreamNotSet();
      }
      await this.audit.record(tx, {
        organizationId: identity.organizationId,
        action: 'upstream.removed',
        target: { type: 'upstream', id: identity.id, label: identity.agentHandle },
        before: toUpstreamView(removed),
      });
    });
  }

  /** Copies the upstream card's description and skills into the identity's card (its URLs stay the service's). */
  async importCard(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<IdentityView> {
    const identity = await this.identities.readable(principal, handle);
    const upstream = await this.require(identity.id);
    let card: AgentCard;
    let raw: unknown;
    try {
      ({ card, raw } = await this.fetchCardOf(upstream.url, upstream.cardUrl));
    } catch (error) {
      throw new AppError(
        422,
        'upstream_card_unreachable',
        `The upstream's Agent Card could not be read (${reasonOf(error)}).`,
      );
    }
    await this.repository.recordCardVerification(identity.id, await this.verify(raw, upstream.trust));
    return this.identities.updateCard(principal, handle, {
      description: clip(card.description ?? '', CARD_LIMITS.description),
      skills: (card.skills ?? [])
        .slice(0, CARD_LIMITS.skills)
        .filter((skill) => skill.id && skill.name)
        .map((skill) => ({
          id: clip(skill.id, SKILL_LIMITS.id),
          name: clip(skill.name, SKILL_LIMITS.name),
          description: clip(skill.description ?? '', SKILL_LIMITS.description),
          tags: (skill.tags ?? [])
            .slice(0, SKILL_LIMITS.tags)
            .map((tag) => clip(tag, SKILL_LIMITS.tag))
            .filter(Boolean),
          examples: (skill.examples ?? [])
            .slice(0, SKILL_LIMITS.examples)
            .map((example) => clip(example, SKILL_LIMITS.example)),
          ...importedModes('inputModes', skill.inputModes),
          ...importedModes('outputModes', skill.outputModes),
        }))
        .filter((skill, i, all) => all.findIndex((other) => other.id === skill.id) === i),
    });
  }

  /** In the cancel's transaction: forward the cancel when the worker has an upstream. */
  queueCancel(tx: Tx, taskId: string, workerIdentityId: string): Promise<boolean> {
    return this.repository.queueCancel(taskId, workerIdentityId, currentTraceparent(), tx);
  }

  private async require(identityId: string): Promise<UpstreamRecord> {
    const upstream = await this.repository.upstreamOf(identityId);
    if (!upstream) {
      throw upstreamNotSet();
    }
    return upstream;
  }

  /**
   * The card's verification against the keys pinned for the upstream (docs/api.md §14):
   * `raw` is the card as served, so that its signatures cover what they were made over.
   */
  private async verify(raw: unknown, trust: UpstreamRecord['trust']): Promise<CardVerification> {
    let pinned: PinnedKey[] = [];
    try {
      if (trust.jwks) {
        pinned = await parseTrustedKeys(trust.jwks);
      } else if (trust.jwksUri) {
        const res = await this.fetch(trust.jwksUri, { headers: { accept: 'application/json' }, redirect: 'error' });
        if (!res.ok) {
          throw new Error(`HTTP ${res.status}`);
        }
        pinned = await parseTrustedKeys(await res.json());
      }
    } catch (error) {
      return { status: 'failed', kid: null, error: `the pinned key set could not be read (${reasonOf(error)})` };
    }
    return verifyCard(raw, pinned);
  }

  /** The card at `card_url`; else the well-known card under the agent's URL, then at its origin. */
  private async fetchCardOf(url: string, cardUrl: string | null): Promise<ReadCard> {
    if (cardUrl) {
      return { ...(await this.fetchCard(cardUrl)), from: cardUrl };
    }
    const underUrl = wellKnown(url);
    const atOrigin = new URL('/.well-known/agent-card.json', url).toString();
    try {
      return { ...(await this.fetchCard(underUrl)), from: underUrl };
    } catch (error) {
      if (atOrigin === underUrl) {
        throw error;
      }
      return { ...(await this.fetchCard(atOrigin)), from: atOrigin };
    }
  }

  /**
   * The SDK's card resolver (v1.0 or v0.3 cards), through the guarded fetch; and the
   * card's JSON as served (before the SDK's translation), which its signatures cover.
   */
  private async fetchCard(cardUrl: string): Promise<{ card: AgentCard; raw: unknown }> {
    let raw: unknown = null;
    const capturing: typeof fetch = async (input, init) => {
      const res = await this.fetch(input, init);
      raw = await res
        .clone()
        .json()
        .catch(() => null);
      return res;
    };
    const options = { fetchImpl: capturing, legacyCompat: { enabled: true } } as AgentCardResolverOptions;
    const card = await new DefaultAgentCardResolver(options).resolve(cardUrl, '');
    return { card, raw };
  }

  /** The forwards of the organization's recent tasks, per hour and upstream (the overview, docs/api.md §13, "The overview"). */
  forwardsPerHour(organizationId: string, since: Date): Promise<ForwardHour[]> {
    return this.repository.forwardsPerHour(organizationId, since);
  }
}

interface ReadCard {
  card: AgentCard;
  /** The JSON as served. */
  raw: unknown;
  from: string;
}

/** The keys a PUT pins: a JWK Set (checked here), or the URL of one (the webhook URL rules); never both. */
async function trustOf(dto: SetUpstreamDto, allowPrivate: boolean): Promise<UpstreamRecord['trust']> {
  if (dto.trusted_keys !== undefined && dto.trusted_jwks_uri !== undefined) {
    throw badRequest('invalid_trusted_keys', 'Give trusted_keys or trusted_jwks_uri, not both.');
  }
  if (dto.trusted_keys !== undefined) {
    await parseTrustedKeys(dto.trusted_keys);
    return { jwks: dto.trusted_keys as { keys: object[] }, jwksUri: null };
  }
  if (dto.trusted_jwks_uri !== undefined) {
    return {
      jwks: null,
      jwksUri: checkDestinationUrl(
        dto.trusted_jwks_uri,
        allowPrivate,
        'invalid_upstream_url',
        'trusted_jwks_uri',
      ).toString(),
    };
  }
  return { jwks: null, jwksUri: null };
}

const upstreamNotSet = () => notFound('upstream_not_set', 'This identity has no upstream agent.');

function wellKnown(url: string): string {
  return new URL('.well-known/agent-card.json', url.endsWith('/') ? url : `${url}/`).toString();
}

function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}

/** An imported skill's modes: the media types among them, within the limits; none when there are none. */
function importedModes(field: 'inputModes' | 'outputModes', modes: string[] | undefined): Record<string, string[]> {
  const kept = (modes ?? [])
    .filter((mode) => typeof mode === 'string' && mode.length <= SKILL_LIMITS.mode && MEDIA_TYPE.test(mode))
    .slice(0, SKILL_LIMITS.modes);
  return kept.length > 0 ? { [field]: kept } : {};
}
