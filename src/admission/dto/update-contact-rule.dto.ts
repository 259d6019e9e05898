import { PartialType, PickType } from '@nestjs/swagger';
import { CreateContactRuleDto } from './create-contact-rule.dto';

/**
 * The owner and the peer are fixed; to change them, delete the rule and create another.
 * `skills` replaces the rule's skills (an empty list: every call).
 */
export class UpdateContactRuleDto extends PartialType(
  PickType(CreateContactRuleDto, ['direction', 'action', 'skills', 'note'] as const),
) {}
