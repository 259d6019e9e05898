import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth/surface.decorator';
import { migrationsApplied } from '../database/migrate';
import { TaskNotifier } from '../ledger/task-notifier';
import { RateLimitService } from '../limits/rate-limit.service';

type ComponentHealth = 'healthy' | 'unhealthy';

@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly notifier: TaskNotifier,
    private readonly limits: RateLimitService,
  ) {}

  @Get('healthz')
  @Public('Liveness: the process is up')
  alive() {
    return { status: 'ok' };
  }

  /**
   * Ready when the database answers with every migration applied and, on
   * PostgreSQL, the LISTEN connection (task wake-ups across instances) is up. Redis
   * is reported but does not decide: without it rate limits count per instance.
   * `components` lists each part in use: `database`, `listener` (PostgreSQL), `redis` (REDIS_URL).
   */
  @Get('readyz')
  @Public('Readiness: the database is reachable, every migration is applied, the task listener is connected; reports Redis')
  async ready(@Res({ passthrough: true }) res: Response) {
    const components: Record<string, ComponentHealth> = {};
    let reason: string | null = null;
    try {
      await this.dataSource.query('SELECT 1');
      components.database = 'healthy';
      if (!(await migrationsApplied(this.dataSource))) reason = 'migrations_pending';
    } catch {
      components.database = 'unhealthy';
      reason = 'database_unreachable';
    }
    const listener = this.notifier.healthy();
    if (listener !== null) {
      components.listener = listener ? 'healthy' : 'unhealthy';
      if (!listener) reason ??= 'listener_disconnected';
    }
    const redis = this.limits.redisHealthy();
    if (redis !== null) components.redis = redis ? 'healthy' : 'unhealthy';
    if (reason === null) return { status: 'ready', components };
    res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: 'not_ready', reason, components };
  }
}
