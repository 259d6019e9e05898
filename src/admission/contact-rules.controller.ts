import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ContactRulesService } from './contact-rules.service';
import { CreateContactRuleDto } from './dto/create-contact-rule.dto';
import { ListContactRulesQuery } from './dto/list-contact-rules.query';
import { UpdateContactRuleDto } from './dto/update-contact-rule.dto';

const RuleId = () => Param('id', new ParseIdPipe('contact_rule_not_found', 'contact rule'));

@ApiTags('Admission')
@Controller('api/v1/contact-rules')
export class ContactRulesController {
  constructor(private readonly rules: ContactRulesService) {}

  @Get()
  @Surface('ledger', 'List contact rules: the organization\'s (admin key, Console) or the key\'s own identity\'s (agent key)')
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContactRulesQuery) {
    return this.rules.list(principal, query);
  }

  @Post()
  @Surface('contactRuleAdmin', 'Create a contact rule for an identity of the organization')
  create(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CreateContactRuleDto) {
    return this.rules.create(principal, dto);
  }

  @Patch(':id')
  @Surface('contactRuleAdmin', 'Change a contact rule\'s action, direction or note')
  update(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @RuleId() id: string, @Body() dto: UpdateContactRuleDto) {
    return this.rules.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @Surface('contactRuleAdmin', 'Delete a contact rule')
  remove(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @RuleId() id: string) {
    return this.rules.remove(principal, id);
  }
}
