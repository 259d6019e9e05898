import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { RateLimitService } from '../limits/rate-limit.service';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { ListDeliveriesQuery } from './dto/list-deliveries.query';
import { ListWebhooksQuery } from './dto/list-webhooks.query';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhooksService } from './webhooks.service';

const WebhookId = () => Param('id', new ParseIdPipe('webhook_not_found', 'webhook'));
const DeliveryId = () => Param('delivery_id', new ParseIdPipe('delivery_not_found', 'delivery'));

type Caller = KeyPrincipal | ConsolePrincipal;

@ApiTags('Webhooks')
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly limits: RateLimitService,
  ) {}

  @Post()
  @Surface('webhooks', 'Subscribe an https endpoint to events. The signing `secret` is returned only here.')
  create(@CurrentPrincipal() principal: Caller, @Body() dto: CreateWebhookDto) {
    return this.webhooks.create(principal, dto);
  }

  @Get()
  @Surface('webhooks', 'List webhooks (an agent key sees only its own identity\'s)')
  list(@CurrentPrincipal() principal: Caller, @Query() query: ListWebhooksQuery) {
    return this.webhooks.list(principal, query);
  }

  @Get(':id')
  @Surface('webhooks', 'Read a webhook (never its secret)')
  get(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.get(principal, id);
  }

  @Patch(':id')
  @Surface('webhooks', 'Change a webhook\'s URL, event filter, description, or enable / disable it')
  update(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @Body() dto: UpdateWebhookDto) {
    return this.webhooks.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Surface('webhooks', 'Delete a webhook and its delivery log')
  remove(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.remove(principal, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Surface('webhooks', 'Issue a new signing secret (returned only here); the old one keeps signing for 24 hours')
  rotateSecret(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.rotateSecret(principal, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Surface('webhooks', 'Send a `ping` event to this webhook (RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE per organization)')
  async test(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @Res({ passthrough: true }) res: Response) {
    // The `webhooks` surface admits only principals of an organization.
    await this.limits.enforce(res, 'webhook_tests', `organization:${principal.organizationId!}`);
    return this.webhooks.test(principal, id);
  }

  @Get(':id/deliveries')
  @Surface('webhooks', 'The webhook\'s deliveries, newest first, with their attempts')
  deliveries(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @Query() query: ListDeliveriesQuery) {
    return this.webhooks.deliveries(principal, id, query);
  }

  @Post(':id/deliveries/:delivery_id/retry')
  @HttpCode(202)
  @Surface('webhooks', 'Attempt a delivery again now')
  retry(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @DeliveryId() deliveryId: string) {
    return this.webhooks.retry(principal, id, deliveryId);
  }
}
