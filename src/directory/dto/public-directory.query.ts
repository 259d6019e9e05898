import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';
import { CardFiltersQuery } from './card-filters.query';

export class PublicDirectoryQuery extends CardFiltersQuery {
  @ApiPropertyOptional({
    maxLength: 100,
    description: "Only agents of the organization of this name (the card's provider.organization; case-insensitive).",
  })
  @Optional()
  @IsString()
  @MaxLength(100)
  organization?: string;

  @ApiPropertyOptional({
    enum: ['JSONRPC', 'HTTP+JSON', 'GRPC'],
    description: 'Only agents served on this protocol binding (GRPC: none while the service has gRPC off).',
  })
  @Optional()
  @IsIn(['JSONRPC', 'HTTP+JSON', 'GRPC'])
  binding?: 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

  @ApiPropertyOptional({ enum: ['1.0', '0.3'], description: 'Only agents served in this A2A protocol generation.' })
  @Optional()
  @IsIn(['1.0', '0.3'])
  protocol_version?: '1.0' | '0.3';
}
