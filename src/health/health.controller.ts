import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/surface.decorator';
import { migrationsApplied } from '../database/migrate';

@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('healthz')
  @Public('Liveness: the process is up')
  alive() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @Public('Readiness: the database is reachable and every migration is applied')
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
