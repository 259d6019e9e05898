import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn } from 'class-validator';
import { Optional } from '../../common/validation';
import { FILTER_MODES, type FilterMode } from '../identity.entity';
import { IsAgentHandle } from './agent-handle';
import { CardFieldsDto } from './card-fields.dto';

/** `POST /api/v1/identities`: claimed on creation, receiver disabled (docs/api.md §3). */
export class CreateIdentityDto extends CardFieldsDto {
  @IsAgentHandle()
  agent_handle: string;

  @ApiPropertyOptional({ default: false })
  @Optional()
  @IsBoolean()
  publicly_discoverable?: boolean;

  @ApiPropertyOptional({ default: false })
  @Optional()
  @IsBoolean()
  allow_public_egress?: boolean;

  @ApiPropertyOptional({ enum: FILTER_MODES, default: 'whitelist' })
  @Optional()
  @IsIn(FILTER_MODES)
  filter_mode?: FilterMode;

  @ApiPropertyOptional({
    default: false,
    description: 'Also mint an agent key bound to the identity; its plaintext is returned once.',
  })
  @Optional()
  @IsBoolean()
  mint_key?: boolean;
}
