import { Body, Controller, Delete, Get, HttpCode, Post, Put, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { AgentHandle } from '../identities/handle.pipe';
import { IdentitySchema } from '../identities/identity.view';
import { RateLimitService } from '../limits/rate-limit.service';
import { SetUpstreamDto } from './dto/set-upstream.dto';
import { TestUpstreamDto } from './dto/test-upstream.dto';
import { UpstreamsService } from './upstreams.service';
import { UpstreamSchema } from './upstream.view';
import { UpstreamTestSchema } from './upstream-test.view';

type Admin = AdminKeyPrincipal | ConsolePrincipal;

@ApiTags('Upstream agents')
@Controller('api/v1/identities/:handle/upstream')
export class UpstreamController {
  constructor(
    private readonly upstreams: UpstreamsService,
    private readonly limits: RateLimitService,
  ) {}

  @Put()
  @Surface('organizationAdmin', {
    id: 'setUpstream',
    summary: "Forward an identity's work to an existing A2A agent (its secret is write-only: never returned)",
    notes:
      "Protocol version and binding default to what the upstream's Agent Card offers; the forwarder speaks JSON-RPC.",
  })
  @Returns(200, UpstreamSchema)
  @Refuses({
    400: '`invalid_upstream_url`: `url` or `card_url` is not a public https URL; other fields: `validation_failed`.',
    404: '`identity_not_found`: no identity of your organization has that handle.',
    422: "`upstream_card_unreachable`: the upstream's Agent Card could not be read (give `protocol_version` and `binding`, or a `card_url` that answers); `upstream_binding_unsupported`: no JSON-RPC, HTTP+JSON or gRPC interface of A2A 1.0 or 0.3 (of those the request names).",
  })
  set(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string, @Body() dto: SetUpstreamDto) {
    return this.upstreams.set(principal, handle, dto);
  }

  @Get()
  @Surface('upstreamRead', { id: 'getUpstream', summary: "Read an identity's upstream agent (never its secret)" })
  @Returns(200, UpstreamSchema)
  @Refuses({
    404: '`identity_not_found`: no identity of your organization has that handle; `upstream_not_set`: it has no upstream agent.',
  })
  get(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.upstreams.get(principal, handle);
  }

  @Delete()
  @HttpCode(204)
  @Surface('organizationAdmin', {
    id: 'removeUpstream',
    summary: 'Stop forwarding: the identity answers through the task ledger again',
  })
  @Returns(204)
  @Refuses({
    404: '`identity_not_found`: no identity of your organization has that handle; `upstream_not_set`: it has no upstream agent.',
  })
  remove(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string) {
    return this.upstreams.remove(principal, handle);
  }

  @Post('test')
  @HttpCode(200)
  @Surface('organizationAdmin', {
    id: 'testUpstream',
    summary:
      "Read an upstream's Agent Card as saving would, and say what was found, changing nothing (RATE_LIMIT_UPSTREAM_TESTS_PER_MINUTE per organization)",
    notes:
      'The body of a PUT tests that upstream before it is saved; an empty body tests the saved one. An upstream whose card cannot be read, or offers no interface the forwarder speaks, is a 200 whose `problem` is what a PUT of the same body would be refused with.',
  })
  @Returns(200, UpstreamTestSchema)
  @Refuses({
    400: '`invalid_upstream_url`: `url`, `card_url` or `trusted_jwks_uri` is not a public https URL; `invalid_trusted_keys`; other fields: `validation_failed`.',
    404: '`identity_not_found`: no identity of your organization has that handle; `upstream_not_set`: an empty body, and it has no upstream agent.',
  })
  async test(
    @CurrentPrincipal() principal: Admin,
    @AgentHandle() handle: string,
    @Body() dto: TestUpstreamDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    // Each test reads an outside card on demand, as a webhook ping sends one: the same kind of quota.
    await this.limits.enforce(res, 'upstream_tests', `organization:${principal.organizationId}`);
    return this.upstreams.test(principal, handle, dto);
  }

  @Post('import-card')
  @HttpCode(200)
  @Surface('organizationAdmin', {
    id: 'importUpstreamCard',
    summary: "Copy the upstream agent's card description and skills into the identity's card",
  })
  @Returns(200, IdentitySchema, 'The identity, with its updated card.')
  @Refuses({
    404: '`identity_not_found`: no identity of your organization has that handle; `upstream_not_set`: it has no upstream agent.',
    409: '`identity_deleted`: a deleted identity can be read but not changed.',
    422: "`upstream_card_unreachable`: the upstream's Agent Card could not be read.",
  })
  importCard(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string) {
    return this.upstreams.importCard(principal, handle);
  }
}
