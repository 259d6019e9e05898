import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import type { DeliveryStatus } from '../delivery.entity';

export class ListDeliveriesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ['pending', 'succeeded', 'failed'] })
  @IsOptional()
  @IsIn(['pending', 'succeeded', 'failed'])
  status?: DeliveryStatus;
}
