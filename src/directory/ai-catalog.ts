import { createHash } from 'node:crypto';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { shownSkills } from '../identities/card-skills';
import type { Identity } from '../identities/identity.entity';
import { cardUrl } from '../identities/identity.view';

/**
 * The public directory as an AI Catalog (docs/api.md §4, "AI Catalog"): the Agent-Card
 * working group's AI Catalog specification, version 0.9 (`application/ai-catalog+json`),
 * at the Discoverable level — host info, and one entry per publicly listed agent
 * referencing its signed Agent Card. The specification has no paging of its own; it
 * partitions a large catalog into nested catalogs, so a page that is not the last ends
 * with an entry of type `application/ai-catalog+json` for the next page.
 */
export const AI_CATALOG_SPEC_VERSION = '0.9';
export const AI_CATALOG_MEDIA_TYPE = 'application/ai-catalog+json';
export const A2A_CARD_MEDIA_TYPE = 'application/a2a-agent-card+json';
/** Agents per catalog document. */
export const AI_CATALOG_PAGE_SIZE = 100;

export interface AiCatalogEntry {
  identifier: string;
  type: string;
  url: string;
  updatedAt?: string;
  tags?: string[];
}

export interface AiCatalogDocument {
  specVersion: string;
  host: { displayName: string; identifier: string; documentationUrl: string };
  entries: AiCatalogEntry[];
}

/** One catalog document: the page's agents, then the next page's nested catalog when there is one. */
export function toAiCatalog(baseUrl: string, agents: Identity[], nextCursor: string | null): AiCatalogDocument {
  const host = new URL(baseUrl).hostname;
  const entries: AiCatalogEntry[] = agents.map((identity) => {
    const tags = [...new Set(shownSkills(identity.skills, 'public').flatMap((skill) => skill.tags))];
    return {
      // The service publishes (and signs) these cards, so the identifier is under its domain.
      identifier: `urn:air:${host}:a2a:${identity.agentHandle}`,
      type: A2A_CARD_MEDIA_TYPE,
      url: cardUrl(baseUrl, identity.agentHandle),
      updatedAt: identity.updatedAt.toISOString(),
      ...(tags.length > 0 ? { tags } : {}),
    };
  });
  if (nextCursor) {
    entries.push({
      identifier: `urn:air:${host}:catalog:directory-after-${nextCursor}`,
      type: AI_CATALOG_MEDIA_TYPE,
      url: `${baseUrl}/.well-known/ai-catalog.json?cursor=${nextCursor}`,
    });
  }
  return {
    specVersion: AI_CATALOG_SPEC_VERSION,
    host: { displayName: host, identifier: host, documentationUrl: `${baseUrl}/api/docs` },
    entries,
  };
}

/** A strong ETag of the document's bytes. */
export function catalogETag(document: AiCatalogDocument): string {
  return `"${createHash('sha256').update(JSON.stringify(document)).digest('base64url').slice(0, 27)}"`;
}

@ApiSchema({ name: 'AiCatalogHost' })
class AiCatalogHostSchema {
  @ApiProperty() displayName: string;
  @ApiProperty() identifier: string;
  @ApiProperty() documentationUrl: string;
}

@ApiSchema({ name: 'AiCatalogEntry' })
class AiCatalogEntrySchema {
  @ApiProperty({ example: 'urn:air:agents.example.com:a2a:acme-billing' }) identifier: string;
  @ApiProperty({ enum: [A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE] }) type: string;
  @ApiProperty({ description: "The agent's card (or, for the last entry of a page, the next page)." }) url: string;
  @ApiPropertyOptional({ format: 'date-time' }) updatedAt?: string;
  @ApiPropertyOptional({ type: [String] }) tags?: string[];
}

@ApiSchema({ name: 'AiCatalog' })
export class AiCatalogSchema {
  @ApiProperty({ example: AI_CATALOG_SPEC_VERSION }) specVersion: string;
  @ApiProperty({ type: AiCatalogHostSchema }) host: AiCatalogHostSchema;
  @ApiProperty({ type: [AiCatalogEntrySchema] }) entries: AiCatalogEntrySchema[];
}
