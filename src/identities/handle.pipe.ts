import { Param, type PipeTransform } from '@nestjs/common';
import { notFound } from '../common/app-error';
import type { CodeWithStatus } from '../common/error-codes';
import { isHandle } from './handle';

/** A handle in the path; a segment that cannot be a handle names nothing (404, no query). */
class ParseHandlePipe implements PipeTransform<string, string> {
  constructor(private readonly notFoundCode: CodeWithStatus<404>) {}

  transform(value: string): string {
    if (!isHandle(value)) {
      throw notFound(this.notFoundCode, 'No identity with that handle.');
    }
    return value;
  }
}

/** The `:handle` path parameter; `notFoundCode` names the 404 of the surface. */
export const AgentHandle = (notFoundCode: CodeWithStatus<404> = 'identity_not_found') =>
  Param('handle', new ParseHandlePipe(notFoundCode));
