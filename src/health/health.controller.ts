import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiSchema, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/surface.decorator';
import { migrationsApplied } from '../database/migrate';
import { Returns } from '../common/api-docs';

@ApiSchema({ name: 'HealthStatus' })
class HealthSchema {
  @ApiProperty({ enum: ['ok', 'ready', 'not_ready'] }) status: string;
  @ApiPropertyOptional({ enum: ['database_unreachable', 'migrations_pending'] }) reason?: string;
}

@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('healthz')
  @Public({ id: 'getHealth', summary: 'Liveness: the process is up' })
  @Returns(200, HealthSchema)
  alive() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @Public({ id: 'getReadiness', summary: 'Readiness: the database is reachable and every migration is applied' })
  @Returns(200, HealthSchema)
  @ApiResponse({ status: 503, description: 'Not ready: `database_unreachable` or `migrations_pending`.', type: HealthSchema })
  async ready(@Res({ passthrough: true }) res: Response) {
    try {
      await this.dataSource.query('SELECT 1');
      if (await migrationsApplied(this.dataSource)) return { status: 'ready' };
      res.status(HttpStatus.SERVICE_UNAVAILABLE);
      return { status: 'not_ready', reason: 'migrations_pending' };
    } catch {
      res.status(HttpStatus.SERVICE_UNAVAILABLE);
      return { status: 'not_ready', reason: 'database_unreachable' };
    }
  }
}
