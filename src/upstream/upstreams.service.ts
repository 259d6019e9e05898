import { Inject, Injectable } from '@nestjs/common';
import { DefaultAgentCardResolver, type AgentCardResolverOptions } from '@a2a-js/sdk/client';
import type { AgentCard } from '@a2a-js/sdk';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { AppError, badRequest, notFound } from '../common/app-error';
import { parseTrustedKeys } from './card-verification';
import { PinnedCardKeys } from './pinned-card-keys';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { checkDestinationUrl } from '../events/address-policy';
import { systemResolver } from '../events/delivery-sender';
import { CARD_LIMITS } from '../identities/dto/card-fields.dto';
import { MEDIA_TYPE, SKILL_LIMITS } from '../identities/dto/agent-skill.dto';
import { IdentitiesService } from '../identities/identities.service';
import type { IdentityView } from '../identities/identity.view';
import { Database, type Tx } from '../database/database';
import { AuditService } from '../audit/audit.service';
import type { SetUpstreamDto, UpstreamBinding, UpstreamVersion } from './dto/set-upstream.dto';
import type { TestUpstreamDto } from './dto/test-upstream.dto';
import { configuredUpstreamFetch, reasonOf, UpstreamUnreachable } from './upstream-fetch';
import { cardShapeProblem, clip, listOf } from './card-shape';
import { chooseInterface, interfaceUrl } from './upstream-interface';
import { currentTraceparent } from '../tracing/tracing';
import { UpstreamRepository, type ForwardHour, type UpstreamRecord } from './upstream.repository';
import { toUpstreamView, type UpstreamView } from './upstream.view';
import { toUpstreamTestView, type UpstreamTestResult, type UpstreamTestView } from './upstream-test.view';

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
    private readonly cardKeys: PinnedCardKeys,
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
    const target = await this.targetOf(dto);
    // The card decides what the request leaves open, and tells whether the upstream streams
    // (not read when the request names everything and no card: the upstream is then called without streaming).
    const named = target.wanted.binding !== undefined && target.wanted.protocolVersion !== undefined;
    const read =
      named && !target.cardUrl
        ? null
        : await this.fetchCardOf(target.url, target.cardUrl).catch((error: unknown) => {
            if (named) {
              return null;
            }
            throw cardUnreachable(error);
          });
    const verification = read ? await this.cardKeys.verify(read.raw, target.trust) : null;
    const { binding, protocolVersion, endpoint, readFrom, streaming } = this.choose(target, read);
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
          streaming,
          auth: {
            type: auth.type,
            header: auth.type === 'api_key' ? (auth.header ?? null) : null,
            value: auth.type === 'none' ? null : (auth.value ?? null),
          },
          trust: target.trust,
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

  /**
   * What `set` would find, changing nothing (docs/api.md §14, "Testing an upstream"): the
   * card read through the same fetch and address rules, verified against the keys the body
   * pins, and what would be stored. Without `url`, the saved upstream. An upstream whose
   * card cannot be read, or offers nothing the forwarder speaks, is a finding (its `problem`
   * is the refusal a PUT of the same body would get), not an error of the request.
   */
  async test(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    handle: string,
    dto: TestUpstreamDto,
  ): Promise<UpstreamTestView> {
    const identity = await this.identities.readable(principal, handle);
    const saved = dto.url === undefined;
    const target = saved
      ? savedTarget(await this.require(identity.id))
      : await this.targetOf({ ...dto, url: dto.url! });
    let read: ReadCard | null = null;
    let unreachable: unknown = null;
    try {
      read = await this.fetchCardOf(target.url, target.cardUrl);
    } catch (error) {
      unreachable = error;
    }
    // The pinned set read afresh: an admin who fixed their key set sees it now.
    const verification = read ? await this.cardKeys.verify(read.raw, target.trust, true) : null;
    // What `set` would do with it: it reads no card when the request names everything and no card.
    const named = target.wanted.binding !== undefined && target.wanted.protocolVersion !== undefined;
    let forward: UpstreamTestResult['forward'] = null;
    let problem: AppError | null = null;
    if (!read && !named) {
      problem = cardUnreachable(unreachable);
    } else {
      try {
        const chosen = this.choose(target, named && !target.cardUrl ? null : read);
        forward = {
          url: chosen.endpoint,
          protocolVersion: chosen.protocolVersion,
          binding: chosen.binding,
          streaming: chosen.streaming,
        };
      } catch (error) {
        if (!(error instanceof AppError)) {
          throw error;
        }
        problem = error;
      }
    }
    return toUpstreamTestView({
      saved,
      url: target.url,
      readFrom: read?.from ?? null,
      card: read?.card ?? null,
      unreachable: read ? null : reasonOf(unreachable),
      verification,
      forward,
      problem,
      testedAt: new Date(),
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
      throw cardUnreachable(error, false);
    }
    await this.repository.recordCardVerification(identity.id, await this.cardKeys.verify(raw, upstream.trust));
    return this.identities.updateCard(principal, handle, {
      description: clip(card.description, CARD_LIMITS.description),
      skills: listOf(card.skills)
        .slice(0, CARD_LIMITS.skills)
        .filter((skill) => clip(skill?.id, 1) && clip(skill.name, 1))
        .map((skill) => ({
          id: clip(skill.id, SKILL_LIMITS.id),
          name: clip(skill.name, SKILL_LIMITS.name),
          description: clip(skill.description, SKILL_LIMITS.description),
          tags: listOf(skill.tags)
            .slice(0, SKILL_LIMITS.tags)
            .map((tag) => clip(tag, SKILL_LIMITS.tag))
            .filter(Boolean),
          examples: listOf(skill.examples)
            .slice(0, SKILL_LIMITS.examples)
            .map((example) => clip(example, SKILL_LIMITS.example))
            .filter(Boolean),
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

  /** A PUT's upstream, its addresses and pinned keys checked (400s), before anything is read. */
  private async targetOf(dto: SetUpstreamDto): Promise<Target> {
    const allowPrivate = this.config.webhooksAllowPrivateNetworks;
    return {
      url: checkDestinationUrl(dto.url, allowPrivate, 'invalid_upstream_url').toString(),
      cardUrl:
        dto.card_url === undefined
          ? null
          : checkDestinationUrl(dto.card_url, allowPrivate, 'invalid_upstream_url', 'card_url').toString(),
      trust: await trustOf(dto, allowPrivate),
      wanted: { binding: dto.binding, protocolVersion: dto.protocol_version },
    };
  }

  /**
   * What the forwarder calls, from what the request names and the card offers (`read`,
   * null when none was read). When the chosen interface's URL is not `url`, the endpoint
   * is that interface's, and the card is read again where it was read this time
   * (so that import-card finds it).
   */
  private choose(target: Target, read: ReadCard | null): Chosen {
    const allowPrivate = this.config.webhooksAllowPrivateNetworks;
    const card = read?.card ?? null;
    const { binding, protocolVersion, url: offeredUrl } = chooseInterface(card, target.wanted);
    let endpoint = target.url;
    let readFrom = target.cardUrl;
    if (offeredUrl !== null) {
      const advertised = checkDestinationUrl(
        interfaceUrl(offeredUrl, binding, allowPrivate),
        allowPrivate,
        'invalid_upstream_url',
      ).toString();
      if (advertised !== target.url) {
        endpoint = advertised;
        readFrom = target.cardUrl ?? read!.from;
      }
    }
    return { binding, protocolVersion, endpoint, readFrom, streaming: card?.capabilities?.streaming === true };
  }

  private async require(identityId: string): Promise<UpstreamRecord> {
    const upstream = await this.repository.upstreamOf(identityId);
    if (!upstream) {
      throw upstreamNotSet();
    }
    return upstream;
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
    const problem = cardShapeProblem(card);
    if (problem) {
      throw new UpstreamUnreachable(problem);
    }
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

/** The upstream a PUT names (or the saved one), checked. */
interface Target {
  url: string;
  cardUrl: string | null;
  trust: UpstreamRecord['trust'];
  wanted: { binding?: UpstreamBinding; protocolVersion?: UpstreamVersion };
}

/** What `set` stores of the interface: where and how the forwarder calls the upstream. */
interface Chosen {
  binding: UpstreamBinding;
  protocolVersion: UpstreamVersion;
  endpoint: string;
  readFrom: string | null;
  streaming: boolean;
}

/** The saved upstream as a test's target: its binding and generation as saved, its card where it is read again. */
const savedTarget = (upstream: UpstreamRecord): Target => ({
  url: upstream.url,
  cardUrl: upstream.cardUrl,
  trust: upstream.trust,
  wanted: { binding: upstream.binding, protocolVersion: upstream.protocolVersion },
});

/** 422 `upstream_card_unreachable`; `hint`: the PUT's way out (name the interface, or a card that answers). */
function cardUnreachable(error: unknown, hint = true): AppError {
  return new AppError(
    422,
    'upstream_card_unreachable',
    `The upstream's Agent Card could not be read (${reasonOf(error)})${hint ? '; give protocol_version and binding, or a card_url that answers' : ''}.`,
  );
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

/** An imported skill's modes: the media types among them, within the limits; none when there are none. */
function importedModes(field: 'inputModes' | 'outputModes', modes: string[] | undefined): Record<string, string[]> {
  const kept = listOf(modes)
    .filter((mode) => typeof mode === 'string' && mode.length <= SKILL_LIMITS.mode && MEDIA_TYPE.test(mode))
    .slice(0, SKILL_LIMITS.modes);
  return kept.length > 0 ? { [field]: kept } : {};
}
