import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { RateLimitService } from '../limits/rate-limit.service';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { ListDeliveriesQuery } from './dto/list-deliveries.query';
import { ListWebhooksQuery } from './dto/list-webhooks.query';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhooksService } from './webhooks.service';
import { Refuses, Returns } from '../common/api-docs';
import { DeliveryPage, DeliverySchema, WebhookPage, WebhookSchema, WebhookWithSecretSchema } from './webhook.view';

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
  @Surface('webhooks', {
    id: 'createWebhook',
    summary: 'Subscribe an https endpoint to events; the signing `secret` is returned only here',
  })
  @Returns(201, WebhookWithSecretSchema)
  @Refuses({
    403: '`own_identity_only`: an agent key subscribes for its own identity only.',
    404: '`identity_not_found`: the identity is not one of your organization.',
    409: '`webhook_limit_reached`: an organization has at most 50 webhooks.',
  })
  create(@CurrentPrincipal() principal: Caller, @Body() dto: CreateWebhookDto) {
    return this.webhooks.create(principal, dto);
  }

  @Get()
  @Surface('webhooks', {
    id: 'listWebhooks',
    summary: 'List webhooks',
    notes: "An agent key sees only its own identity's.",
  })
  @Returns(200, WebhookPage)
  list(@CurrentPrincipal() principal: Caller, @Query() query: ListWebhooksQuery) {
    return this.webhooks.list(principal, query);
  }

  @Get(':id')
  @Surface('webhooks', { id: 'getWebhook', summary: 'Read a webhook (never its secret)' })
  @Returns(200, WebhookSchema)
  get(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.get(principal, id);
  }

  @Patch(':id')
  @Surface('webhooks', {
    id: 'updateWebhook',
    summary: "Change a webhook's URL, events or description, or enable or disable it",
  })
  @Returns(200, WebhookSchema)
  update(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @Body() dto: UpdateWebhookDto) {
    return this.webhooks.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Surface('webhooks', { id: 'deleteWebhook', summary: 'Delete a webhook and its delivery log' })
  @Returns(204)
  remove(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.remove(principal, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Surface('webhooks', {
    id: 'rotateWebhookSecret',
    summary: 'Issue a new signing secret (returned only here)',
    notes: 'The old secret keeps signing, next to the new one, for 24 hours.',
  })
  @Returns(200, WebhookWithSecretSchema)
  rotateSecret(@CurrentPrincipal() principal: Caller, @WebhookId() id: string) {
    return this.webhooks.rotateSecret(principal, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Surface('webhooks', {
    id: 'testWebhook',
    summary: 'Send a `ping` event to a webhook (RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE per organization)',
  })
  @Returns(202, DeliverySchema, "Accepted: the ping's delivery, to follow in the delivery log.")
  @Refuses({ 409: '`webhook_disabled`: enable the webhook first.' })
  async test(
    @CurrentPrincipal() principal: Caller,
    @WebhookId() id: string,
    @Res({ passthrough: true }) res: Response,
  ) {
    // The `webhooks` surface admits only principals of an organization.
    await this.limits.enforce(res, 'webhook_tests', `organization:${principal.organizationId!}`);
    return this.webhooks.test(principal, id);
  }

  @Get(':id/deliveries')
  @Surface('webhooks', {
    id: 'listWebhookDeliveries',
    summary: "List a webhook's deliveries, newest first, with their attempts",
  })
  @Returns(200, DeliveryPage)
  deliveries(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @Query() query: ListDeliveriesQuery) {
    return this.webhooks.deliveries(principal, id, query);
  }

  @Post(':id/deliveries/:delivery_id/retry')
  @HttpCode(202)
  @Surface('webhooks', { id: 'retryWebhookDelivery', summary: 'Attempt a delivery again now' })
  @Returns(202, DeliverySchema, 'Accepted: the delivery, due now.')
  @Refuses({
    409: '`webhook_disabled`: enable the webhook first; `delivery_in_flight`: it is being attempted right now.',
  })
  retry(@CurrentPrincipal() principal: Caller, @WebhookId() id: string, @DeliveryId() deliveryId: string) {
    return this.webhooks.retry(principal, id, deliveryId);
  }
}
