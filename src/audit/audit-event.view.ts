import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { AuditChanges, AuditEventView } from './audit.service';

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
}

@ApiSchema({ name: 'AuditTarget' })
class AuditTargetSchema {
  @ApiProperty({ example: 'api_key' }) type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'A handle, label or email naming the target.' }) label:
    string | null;
}

/** The OpenAPI schema of an audit entry (CONTRACT §15). */
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
