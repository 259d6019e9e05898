import { PartialType, PickType } from '@nestjs/swagger';
import { CreateContactRuleDto } from './create-contact-rule.dto';

/** The owner and the peer are fixed; to change them, delete the rule and create another. */
export class UpdateContactRuleDto extends PartialType(
  PickType(CreateContactRuleDto, ['direction', 'action', 'note'] as const),
) {}
