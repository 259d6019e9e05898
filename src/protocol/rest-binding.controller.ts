import { Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AgentKeyPrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { RestBindingService } from './rest-binding.service';

/*
 * The routes of the A2A HTTP+JSON binding under `{base}/a2a/{handle}/rest` (docs/api.md
 * §5): v1.0's and, under `/v1`, v0.3's, as the SDK's restHandler lays them out. They
 * are declared here so that the guard checks the credential and spends the protocol
 * quota on each, and so that the authorization matrix lists them; the SDK's router,
 * behind RestBindingService, serves them. A subscribe is declared before a task read,
 * whose `:taskId` would otherwise take `{id}:subscribe`.
 */
const SEND = ['message\\:send', 'v1/message\\:send'];
const STREAM = ['message\\:stream', 'v1/message\\:stream'];
const SUBSCRIBE = ['tasks/:taskId\\:subscribe', 'v1/tasks/:taskId\\:subscribe'];
const POST = [
  'tasks/:taskId\\:cancel',
  'v1/tasks/:taskId\\:cancel',
  'tasks/:taskId/pushNotificationConfigs',
  'v1/tasks/:taskId/pushNotificationConfigs',
];
const GET = [
  'tasks',
  'tasks/:taskId',
  'v1/tasks/:taskId',
  'tasks/:taskId/pushNotificationConfigs',
  'v1/tasks/:taskId/pushNotificationConfigs',
  'tasks/:taskId/pushNotificationConfigs/:configId',
  'v1/tasks/:taskId/pushNotificationConfigs/:configId',
  'extendedAgentCard',
  'v1/card',
];
const DELETE = [
  'tasks/:taskId/pushNotificationConfigs/:configId',
  'v1/tasks/:taskId/pushNotificationConfigs/:configId',
];

// The A2A specification documents these routes; the service's OpenAPI document describes its own API.
@ApiExcludeController()
@Controller('a2a/:handle/rest')
export class RestBindingController {
  constructor(private readonly rest: RestBindingService) {}

  @Post(SEND)
  @Surface('protocol')
  send(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'send', req, res);
  }

  // A stream answers 200 OK (A2A v1.0 §11.7, and the SDK's own server): the SDK's router
  // leaves a stream's status alone, so without this it would be Nest's 201 for a POST.
  @Post([...STREAM, ...SUBSCRIBE])
  @HttpCode(200)
  @Surface('protocol')
  stream(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'stream', req, res);
  }

  @Get(SUBSCRIBE)
  @Surface('protocol')
  subscribe(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'stream', req, res);
  }

  @Post(POST)
  @Surface('protocol')
  post(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'unary', req, res);
  }

  @Get(GET)
  @Surface('protocol')
  get(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'unary', req, res);
  }

  @Delete(DELETE)
  @Surface('protocol')
  delete(
    @CurrentPrincipal() principal: AgentKeyPrincipal,
    @Param('handle') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.rest.serve(principal, handle, 'unary', req, res);
  }
}
