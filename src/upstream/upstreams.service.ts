import { Inject, Injectable } from '@nestjs/common';
import { DefaultAgentCardResolver, type AgentCardResolverOptions } from '@a2a-js/sdk/client';
import type { AgentCard } from '@a2a-js/sdk';
import { DataSource, type EntityManager } from 'typeorm';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { AppError, notFound } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { checkDestinationUrl } from '../events/address-policy';
import { systemResolver } from '../events/delivery-sender';
import { CARD_LIMITS } from '../identities/dto/card-fields.dto';
import { SKILL_LIMITS } from '../identities/dto/agent-skill.dto';
import { IdentitiesService } from '../identities/identities.service';
import type { IdentityView } from '../identities/identity-view';
import type { SetUpstreamDto, UpstreamBinding, UpstreamVersion } from './dto/set-upstream.dto';
import { reasonOf, upstreamFetch } from './upstream-fetch';

/** An identity's upstream, as stored (the secret included: only the forwarder reads it). */
export interface UpstreamRecord {
  identityId: string;
  url: string;
  cardUrl: string | null;
  protocolVersion: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth: { type: 'none' | 'bearer' | 'api_key'; header: string | null; value: string | null };
  createdAt: Date;
  updatedAt: Date;
}

/** What every read shows: never the secret. */
export interface UpstreamView {
  url: string;
  card_url: string | null;
  protocol_version: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth: { type: 'none' | 'bearer' | 'api_key'; header: string | null; value_set: boolean };
  created_at: string;
  updated_at: string;
}

interface UpstreamRow {
  identity_id: string;
  url: string;
  card_url: string | null;
  protocol_version: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth_type: 'none' | 'bearer' | 'api_key';
  auth_header: string | null;
  auth_value: string | null;
  created_at: Date;
  updated_at: Date;
}

const toRecord = (row: UpstreamRow): UpstreamRecord => ({
  identityId: row.identity_id, url: row.url, cardUrl: row.card_url, protocolVersion: row.protocol_version, binding: row.binding,
  streaming: row.streaming, auth: { type: row.auth_type, header: row.auth_header, value: row.auth_value }, createdAt: row.created_at, updatedAt: row.updated_at,
});

export const toUpstreamView = (record: UpstreamRecord): UpstreamView => ({
  url: record.url,
  card_url: record.cardUrl,
  protocol_version: record.protocolVersion,
  binding: record.binding,
  streaming: record.streaming,
  auth: { type: record.auth.type, header: record.auth.header, value_set: record.auth.value !== null },
  created_at: record.createdAt.toISOString(),
  updated_at: record.updatedAt.toISOString(),
});

/** The bindings the forwarder speaks (the SDK client's JSON-RPC transport, both generations). */
const FORWARDED_BINDINGS: readonly UpstreamBinding[] = ['JSONRPC'];

/**
 * Upstream (bridged) identities, CONTRACT §14: an identity names an existing A2A agent,
 * and the forwarder delivers the identity's work to it. Who may do what follows the
 * identity's own rules (IdentitiesService): admin key or Console of its organization
 * set, remove and import; its own key may read, never the secret.
 */
@Injectable()
export class UpstreamsService {
  private readonly fetch: typeof fetch;

  constructor(
    private readonly dataSource: DataSource,
    private readonly identities: IdentitiesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.fetch = upstreamFetch({
      allowPrivateNetworks: config.webhooksAllowPrivateNetworks, resolve: systemResolver,
      timeoutMs: config.upstream.timeoutMs, maxResponseBytes: config.upstream.maxResponseBytes,
    });
  }

  async get(principal: Principal, handle: string): Promise<UpstreamView> {
    const identity = await this.identities.get(principal, handle);
    return toUpstreamView(await this.require(identity.id));
  }

  async set(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string, dto: SetUpstreamDto): Promise<UpstreamView> {
    const identity = await this.identities.get(principal, handle);
    const allowPrivate = this.config.webhooksAllowPrivateNetworks;
    const url = checkDestinationUrl(dto.url, allowPrivate, 'invalid_upstream_url').toString();
    const cardUrl = dto.card_url === undefined ? null : checkDestinationUrl(dto.card_url, allowPrivate, 'invalid_upstream_url').toString();
    // The card decides what the request leaves open, and tells whether the upstream streams
    // (not read when the request names everything and no card: the upstream is then called without streaming).
    const named = dto.protocol_version !== undefined && dto.binding !== undefined;
    const card = named && !cardUrl ? null : await this.fetchCardOf(url, cardUrl).catch((error: unknown) => {
      if (named) return null;
      throw new AppError(422, 'upstream_card_unreachable',
        `The upstream's Agent Card could not be read (${reasonOf(error)}); give protocol_version and binding, or a card_url that answers.`);
    });
    // Cards spell versions "1.0", "0.3", "0.3.0"…: the generation is what counts.
    const offered = (card?.supportedInterfaces ?? []).map((i) => ({ binding: i.protocolBinding as UpstreamBinding, version: generationOf(i.protocolVersion) }));
    const chosen = offered.find((i) => (!dto.binding || i.binding === dto.binding) && (!dto.protocol_version || i.version === dto.protocol_version)
      && FORWARDED_BINDINGS.includes(i.binding) && i.version !== null);
    const binding = dto.binding ?? chosen?.binding;
    const protocolVersion = dto.protocol_version ?? chosen?.version ?? undefined;
    if (!binding || !protocolVersion) {
      throw new AppError(422, 'upstream_binding_unsupported', 'The upstream\'s card offers no JSON-RPC interface of A2A 1.0 or 0.3 that the forwarder speaks.');
    }
    if (!FORWARDED_BINDINGS.includes(binding)) {
      throw new AppError(422, 'upstream_binding_unsupported', `The forwarder speaks ${FORWARDED_BINDINGS.join(', ')} to upstreams; ${binding} is not supported yet.`);
    }
    const auth = dto.auth ?? { type: 'none' as const };
    const [row] = (await this.dataSource.query(
      `INSERT INTO identity_upstreams AS u (identity_id, url, card_url, protocol_version, binding, streaming, auth_type, auth_header, auth_value)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (identity_id) DO UPDATE SET url = $2, card_url = $3, protocol_version = $4, binding = $5, streaming = $6,
         auth_type = $7, auth_header = $8, auth_value = $9, updated_at = now()
       RETURNING *`,
      [identity.id, url, cardUrl, protocolVersion, binding, card?.capabilities?.streaming === true, auth.type,
        auth.type === 'api_key' ? auth.header : null, auth.type === 'none' ? null : auth.value],
    )) as UpstreamRow[];
    return toUpstreamView(toRecord(row));
  }

  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<void> {
    const identity = await this.identities.get(principal, handle);
    const [, removed] = (await this.dataSource.query(`DELETE FROM identity_upstreams WHERE identity_id = $1`, [identity.id])) as [unknown, number];
    if (removed === 0) throw upstreamNotSet();
  }

  /** Copies the upstream card's description and skills into the identity's card (its URLs stay the service's). */
  async importCard(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<IdentityView> {
    const identity = await this.identities.get(principal, handle);
    const upstream = await this.require(identity.id);
    let card: AgentCard;
    try {
      card = await this.fetchCardOf(upstream.url, upstream.cardUrl);
    } catch (error) {
      throw new AppError(422, 'upstream_card_unreachable', `The upstream's Agent Card could not be read (${reasonOf(error)}).`);
    }
    return this.identities.updateCard(principal, handle, {
      description: clip(card.description ?? '', CARD_LIMITS.description),
      skills: (card.skills ?? []).slice(0, CARD_LIMITS.skills).filter((skill) => skill.id && skill.name).map((skill) => ({
        id: clip(skill.id, SKILL_LIMITS.id),
        name: clip(skill.name, SKILL_LIMITS.name),
        description: clip(skill.description ?? '', SKILL_LIMITS.description),
        tags: (skill.tags ?? []).slice(0, SKILL_LIMITS.tags).map((tag) => clip(tag, SKILL_LIMITS.tag)).filter(Boolean),
        examples: (skill.examples ?? []).slice(0, SKILL_LIMITS.examples).map((example) => clip(example, SKILL_LIMITS.example)),
      })).filter((skill, i, all) => all.findIndex((other) => other.id === skill.id) === i),
    });
  }

  /** The forwarder's read: the upstream of an identity, with its secret; null when none is set. */
  async upstreamOf(identityId: string): Promise<UpstreamRecord | null> {
    const [row] = (await this.dataSource.query(`SELECT * FROM identity_upstreams WHERE identity_id = $1`, [identityId])) as UpstreamRow[];
    return row ? toRecord(row) : null;
  }

  /**
   * In the send's transaction: when the worker has an upstream, queue the requester's
   * message for it (once per message id). True when something was queued.
   */
  async queueMessage(em: EntityManager, taskId: string, workerIdentityId: string, messageId: string): Promise<boolean> {
    const rows = (await em.query(
      `INSERT INTO upstream_forwards (task_id, kind, message_id)
       SELECT $1, 'message', $3 FROM identity_upstreams WHERE identity_id = $2
       ON CONFLICT (task_id, kind, message_id) DO NOTHING RETURNING id`,
      [taskId, workerIdentityId, messageId],
    )) as unknown[];
    return rows.length > 0;
  }

  /** In the cancel's transaction: forward the cancel when the worker has an upstream. */
  async queueCancel(em: EntityManager, taskId: string, workerIdentityId: string): Promise<boolean> {
    const rows = (await em.query(
      `INSERT INTO upstream_forwards (task_id, kind, message_id)
       SELECT $1, 'cancel', '' FROM identity_upstreams WHERE identity_id = $2
       ON CONFLICT (task_id, kind, message_id) DO NOTHING RETURNING id`,
      [taskId, workerIdentityId],
    )) as unknown[];
    return rows.length > 0;
  }

  private async require(identityId: string): Promise<UpstreamRecord> {
    const upstream = await this.upstreamOf(identityId);
    if (!upstream) throw upstreamNotSet();
    return upstream;
  }

  /** The card at `card_url`; else the well-known card under the agent's URL, then at its origin. */
  private async fetchCardOf(url: string, cardUrl: string | null): Promise<AgentCard> {
    if (cardUrl) return this.fetchCard(cardUrl);
    const underUrl = wellKnown(url);
    const atOrigin = new URL('/.well-known/agent-card.json', url).toString();
    try {
      return await this.fetchCard(underUrl);
    } catch (error) {
      if (atOrigin === underUrl) throw error;
      return this.fetchCard(atOrigin);
    }
  }

  /** The SDK's card resolver (v1.0 or v0.3 cards), through the guarded fetch. */
  private fetchCard(cardUrl: string): Promise<AgentCard> {
    const options = { fetchImpl: this.fetch, legacyCompat: { enabled: true } } as AgentCardResolverOptions;
    return new DefaultAgentCardResolver(options).resolve(cardUrl, '');
  }
}

const upstreamNotSet = () => notFound('upstream_not_set', 'This identity has no upstream agent.');

function wellKnown(url: string): string {
  return new URL('.well-known/agent-card.json', url.endsWith('/') ? url : `${url}/`).toString();
}

function generationOf(version: string): UpstreamVersion | null {
  if (/^1\.0(\.\d+)?$/.test(version)) return '1.0';
  if (/^0\.3(\.\d+)?$/.test(version)) return '0.3';
  return null;
}

function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, max) : value;
}
