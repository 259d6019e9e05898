import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiSchema, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { Database } from '../database/database';
import { migrationsApplied } from '../database/migrate';
import { TaskNotifier } from '../events/task-notifier';
import { RateLimitService } from '../limits/rate-limit.service';

import { Returns } from '../common/api-docs';

type ComponentHealth = 'healthy' | 'unhealthy';

@ApiSchema({ name: 'HealthStatus' })
class HealthSchema {
  @ApiProperty({ enum: ['ok', 'ready', 'not_ready'] }) status: string;
  @ApiPropertyOptional({ enum: ['database_unreachable', 'migrations_pending', 'listener_disconnected'] })
  reason?: string;
  @ApiPropertyOptional({
    description: 'Each part in use: `database`, `listener`, `redis`.',
    additionalProperties: { enum: ['healthy', 'unhealthy'] },
  })
  components?: Record<string, string>;
}

@ApiTags('Operations')
@Controller()
export class HealthController {
  constructor(
    private readonly db: Database,
    private readonly notifier: TaskNotifier,
    private readonly limits: RateLimitService,
  ) {}

  @Get('healthz')
  @Public({ id: 'getHealth', summary: 'Liveness: the process is up' })
  @Returns(200, HealthSchema)
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
  @Public({
    id: 'getReadiness',
    summary:
      'Readiness: the database is reachable, every migration is applied, the task listener is connected; reports Redis',
  })
  @Returns(200, HealthSchema)
  @ApiResponse({
    status: 503,
    description: 'Not ready: `database_unreachable`, `migrations_pending` or `listener_disconnected`.',
    type: HealthSchema,
  })
  async ready(@Res({ passthrough: true }) res: Response) {
    const components: Record<string, ComponentHealth> = {};
    let reason: string | null = null;
    try {
      await this.db.ping();
      components.database = 'healthy';
      if (!(await migrationsApplied(this.db.dataSource))) {
        reason = 'migrations_pending';
      }
    } catch {
      components.database = 'unhealthy';
      reason = 'database_unreachable';
    }
    const listener = this.notifier.healthy();
    if (listener !== null) {
      components.listener = listener ? 'healthy' : 'unhealthy';
      if (!listener) {
        reason ??= 'listener_disconnected';
      }
    }
    const redis = this.limits.redisHealthy();
    if (redis !== null) {
      components.redis = redis ? 'healthy' : 'unhealthy';
    }
    if (reason === null) {
      return { status: 'ready', components };
    }
    res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: 'not_ready', reason, components };
  }
}
