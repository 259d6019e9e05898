import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ContactRulesService } from './contact-rules.service';
import { CreateContactRuleDto } from './dto/create-contact-rule.dto';
import { ListContactRulesQuery } from './dto/list-contact-rules.query';
import { UpdateContactRuleDto } from './dto/update-contact-rule.dto';
import { Refuses, Returns } from '../common/api-docs';
import { ContactRulePage, ContactRuleSchema } from './contact-rule.view';

const RuleId = () => Param('id', new ParseIdPipe('contact_rule_not_found', 'contact rule'));

@ApiTags('Admission')
@Controller('api/v1/contact-rules')
export class ContactRulesController {
  constructor(private readonly rules: ContactRulesService) {}

  @Get()
  @Surface('ledger', {
    id: 'listContactRules',
    summary: 'List contact rules',
    notes: "An admin key or Console session sees the organization's rules; an agent key its own identity's.",
  })
  @Returns(200, ContactRulePage)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContactRulesQuery) {
    return this.rules.list(principal, query);
  }

  @Post()
  @Surface('contactRuleAdmin', {
    id: 'createContactRule',
    summary: 'Create a contact rule for an identity of your organization',
  })
  @Returns(201, ContactRuleSchema)
  @Refuses({
    404: '`identity_not_found`: the owner is not an identity of your organization; `peer_not_found`.',
    409: '`contact_rule_exists`: the identity has a rule for that peer and direction; `rule_limit_reached`.',
  })
  create(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CreateContactRuleDto) {
    return this.rules.create(principal, dto);
  }

  @Patch(':id')
  @Surface('contactRuleAdmin', {
    id: 'updateContactRule',
    summary: "Change a contact rule's action, direction or note",
  })
  @Returns(200, ContactRuleSchema)
  @Refuses({ 409: '`contact_rule_exists`: another rule has that peer and direction.' })
  update(
    @CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal,
    @RuleId() id: string,
    @Body() dto: UpdateContactRuleDto,
  ) {
    return this.rules.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Surface('contactRuleAdmin', { id: 'deleteContactRule', summary: 'Delete a contact rule' })
  @Returns(204)
  remove(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @RuleId() id: string) {
    return this.rules.remove(principal, id);
  }
}
