import { IntersectionType, PartialType, PickType } from '@nestjs/swagger';
import { PageQuery } from '../../common/pagination';
import { CreateContactRuleDto } from './create-contact-rule.dto';

/** `identity` (the owner's handle), `direction` and `action` filters, plus paging. */
export class ListContactRulesQuery extends IntersectionType(
  PageQuery,
  PartialType(PickType(CreateContactRuleDto, ['identity', 'direction', 'action'] as const)),
) {}
