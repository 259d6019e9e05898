import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import {
  IsString,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { HANDLE_PATTERN, handleProblem } from '../handle';

@ValidatorConstraint({ name: 'agentHandle' })
class AgentHandleConstraint implements ValidatorConstraintInterface {
  /** Non-strings are IsString's to report. */
  validate(value: unknown): boolean {
    return typeof value !== 'string' || handleProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return handleProblem(args.value as string) ?? '';
  }
}

/** A handle that may be registered: format and reserved words (docs/api.md §3). */
export const IsAgentHandle = () =>
  applyDecorators(
    ApiProperty({ minLength: 3, maxLength: 63, pattern: HANDLE_PATTERN.source, example: 'acme-billing' }),
    IsString(),
    Validate(AgentHandleConstraint),
  );
