import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import { MAX_URL_LENGTH } from '../../events/address-policy';
import { SetUpstreamDto } from './set-upstream.dto';

/**
 * `POST /api/v1/identities/{handle}/upstream/test` (docs/api.md §14): the body of a PUT,
 * to test an upstream before saving it; an empty body tests the saved one. Any other
 * field needs `url`, so that a partial body is never mistaken for the saved upstream.
 */
export class TestUpstreamDto extends OmitType(SetUpstreamDto, ['url'] as const) {
  @ApiPropertyOptional({
    description: "The upstream agent's A2A endpoint, as for PUT. Absent (with every other field): the saved upstream.",
    maxLength: MAX_URL_LENGTH,
  })
  @ValidateIf((dto: object, value: unknown) => value !== undefined || Object.values(dto).some((f) => f !== undefined))
  @ValidateBy({
    name: 'upstreamUrl',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && value.length <= MAX_URL_LENGTH,
      // One message for the field, whichever way it is wrong.
      defaultMessage: (args) =>
        args?.value === undefined
          ? 'url is required when other fields are given (an empty body tests the saved upstream)'
          : `url must be a string of at most ${MAX_URL_LENGTH} characters`,
    },
  })
  url?: string;
}
