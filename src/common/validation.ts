import { applyDecorators, ValidationError, ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsObject, ValidateBy, ValidateIf, ValidateNested } from 'class-validator';
import { badRequest, type FieldError } from './app-error';
import { isTimestamp } from './pagination';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent
      ? /^\d+$/.test(error.property)
        ? `${parent}[${error.property}]`
        : `${parent}.${error.property}`
      : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message: message.replace(/^\S+ /, `${field} `),
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** Whitelisting, unknown fields refused, every failure listed by field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const list = flatten(errors).map((e) =>
        e.message.endsWith('should not exist') ? { field: e.field, message: `${e.field} is not a known field` } : e,
      );
      return badRequest(
        'validation_failed',
        list.map((e) => e.message).join('; ') || 'The request is not valid.',
        list,
      );
    },
  });
}

/**
 * An optional field that, when present, must be valid: unlike `@IsOptional()`,
 * `null` is validated (and refused) rather than let through to a NOT NULL column.
 */
export const Optional = () => ValidateIf((_, value: unknown) => value !== undefined);

/**
 * A nested DTO field: an object of `type`, or with `each` an array of them. Every
 * nested field is declared through this decorator, never with a bare `@ValidateNested`:
 * class-validator's nested validation takes an array where an object is expected (it
 * validates the array's items, so `[]` and `[[]]` pass) and class-transformer keeps
 * the array as it is, so the service would get an array instead of the object it
 * types. `IsObject` refuses arrays, null and primitives, for the value or each item.
 */
export function Nested(type: () => new () => object, options: { each?: boolean } = {}): PropertyDecorator {
  const each = options.each ?? false;
  const message = each ? '$property must be a list of objects' : '$property must be an object';
  return applyDecorators(IsObject({ each, message }), ValidateNested({ each }), Type(type));
}

/** An ISO 8601 timestamp with a time zone, one PostgreSQL accepts too (`isTimestamp`). */
export const IsTimestamp = (): PropertyDecorator =>
  ValidateBy({
    name: 'isTimestamp',
    validator: {
      validate: (value: unknown) => isTimestamp(value),
      defaultMessage: () => '$property must be an ISO 8601 timestamp with a time zone (2026-01-01T00:00:00Z)',
    },
  });
