import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { ParseIdPipe } from '../common/parse-id.pipe';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { CreateTrustedIssuerDto } from './dto/create-trusted-issuer.dto';
import { UpdateTrustedIssuerDto } from './dto/update-trusted-issuer.dto';
import { TrustedIssuerListSchema, TrustedIssuerSchema } from './trusted-issuer.view';
import { TrustedIssuersService } from './trusted-issuers.service';

type Admin = AdminKeyPrincipal | ConsolePrincipal;
const IssuerId = () => Param('id', new ParseIdPipe('trusted_issuer_not_found', 'trusted issuer'));

/** Workload identity federation: the issuers an organization trusts (docs/api.md §17). */
@ApiTags('OAuth')
@Controller('api/v1/trusted-issuers')
export class TrustedIssuersController {
  constructor(private readonly trusts: TrustedIssuersService) {}

  @Post()
  @Surface('organizationAdmin', {
    id: 'createTrustedIssuer',
    summary: "Trust an issuer's JWTs: each mapped subject acts as one of the organization's identities",
  })
  @Returns(201, TrustedIssuerSchema)
  @Refuses({
    400: '`invalid_issuer_url`: `issuer` or `jwks_uri` breaks the webhook URL rules; `validation_failed`: a subject maps to no identity of your organization, or `jwks` is not a JWK Set of public keys with their `kid`.',
    409: '`trusted_issuer_taken`: that issuer and audience are trusted already.',
  })
  create(@CurrentPrincipal() principal: Admin, @Body() dto: CreateTrustedIssuerDto) {
    return this.trusts.create(principal, dto);
  }

  @Get()
  @Surface('organizationAdmin', { id: 'listTrustedIssuers', summary: "List the organization's trusted issuers" })
  @Returns(200, TrustedIssuerListSchema)
  list(@CurrentPrincipal() principal: Admin) {
    return this.trusts.list(principal);
  }

  @Get(':id')
  @Surface('organizationAdmin', { id: 'getTrustedIssuer', summary: 'Read a trusted issuer' })
  @Returns(200, TrustedIssuerSchema)
  @Refuses({ 404: '`trusted_issuer_not_found`: no trusted issuer of your organization has that id.' })
  get(@CurrentPrincipal() principal: Admin, @IssuerId() id: string) {
    return this.trusts.get(principal, id);
  }

  @Patch(':id')
  @Surface('organizationAdmin', {
    id: 'updateTrustedIssuer',
    summary: 'Change a trusted issuer: its tokens are read against the change from the next request',
  })
  @Returns(200, TrustedIssuerSchema)
  @Refuses({
    400: '`invalid_issuer_url`, `validation_failed`: as when trusting an issuer.',
    404: '`trusted_issuer_not_found`: no trusted issuer of your organization has that id.',
    409: '`trusted_issuer_taken`: that issuer and audience are trusted already.',
  })
  update(@CurrentPrincipal() principal: Admin, @IssuerId() id: string, @Body() dto: UpdateTrustedIssuerDto) {
    return this.trusts.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Surface('organizationAdmin', {
    id: 'deleteTrustedIssuer',
    summary: 'Stop trusting an issuer: its tokens are refused from the next request',
  })
  @Returns(204)
  @Refuses({ 404: '`trusted_issuer_not_found`: no trusted issuer of your organization has that id.' })
  async remove(@CurrentPrincipal() principal: Admin, @IssuerId() id: string): Promise<void> {
    await this.trusts.remove(principal, id);
  }
}
