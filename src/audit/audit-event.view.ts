import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { AuditListRecord, AuditRecord } from './audit.repository';
import type { AuditChanges } from './audit.service';

/** An audit entry as the API shows it (docs/api.md §15). */
export interface AuditEventView {
  id: string;
  action: string;
  actor: { type: string; id: string | null; label: string | null; name: string | null };
  target: { type: string; id: string | null; label: string | null };
  changes: AuditChanges;
  request_id: string | null;
  client_address: string | null;
  created_at: string;
}

export function toAuditEventView(entry: AuditRecord & { actorName?: string | null }): AuditEventView {
  return {
    id: entry.id,
    action: entry.action,
    actor: { type: entry.actorType, id: entry.actorId, label: entry.actorLabel, name: entry.actorName ?? null },
    target: { type: entry.targetType, id: entry.targetId, label: entry.targetLabel },
    changes: entry.changes,
    request_id: entry.requestId,
    client_address: entry.clientAddress,
    created_at: entry.createdAt.toISOString(),
  };
}

@ApiSchema({ name: 'AuditActor' })
class AuditActorSchema {
  @ApiProperty({ enum: ['console_user', 'api_key', 'signup'] }) type: string;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The Console user or API key; null for signup.',
  })
  id: string | null;
  @ApiProperty({ type: String, nullable: true, description: "The API key's label when it acted." }) label:
    string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "Who acted, as a person names them now: the Console user's email (null once removed), the API key's label (else its prefix); null for signup.",
  })
  name: string | null;
}

@ApiSchema({ name: 'AuditTarget' })
class AuditTargetSchema {
  @ApiProperty({ example: 'api_key' }) type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'A handle, label or email naming the target.' }) label:
    string | null;
}

/** The OpenAPI schema of an audit entry (docs/api.md §15). */
@ApiSchema({ name: 'AuditEvent' })
export class AuditEventSchema implements AuditEventView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'api_key.revoked' }) action: string;
  @ApiProperty({ type: AuditActorSchema }) actor: AuditActorSchema;
  @ApiProperty({ type: AuditTargetSchema }) target: AuditTargetSchema;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Changed fields, `{ field: { before, after } }`; never a secret.',
    example: { label: { before: 'ci', after: 'deploy' } },
  })
  changes: AuditChanges;
  @ApiProperty({ type: String, nullable: true }) request_id: string | null;
  @ApiProperty({ type: String, nullable: true }) client_address: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export const AuditEventPage = PageOf(AuditEventSchema, 'audit_events', 'AuditEventList');

/** A page of the log as `GET /api/v1/audit-events` answers it. */
export function toAuditEventPage(page: { items: AuditListRecord[]; nextCursor: string | null }): {
  audit_events: AuditEventView[];
  next_cursor: string | null;
} {
  return { audit_events: page.items.map(toAuditEventView), next_cursor: page.nextCursor };
}
