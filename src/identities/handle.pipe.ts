import { Param, type PipeTransform } from '@nestjs/common';
import { notFound } from '../common/app-error';
import { isHandle } from './handle';

/** A handle in the path; a segment that cannot be a handle names nothing (404, no query). */
class ParseHandlePipe implements PipeTransform<string, string> {
  constructor(private readonly notFoundCode: string) {}

  transform(value: string): string {
    if (!isHandle(value)) throw notFound(this.notFoundCode, 'No identity with that handle.');
    return value;
  }
}

/** The `:handle` path parameter; `notFoundCode` names the 404 of the surface. */
export const AgentHandle = (notFoundCode = 'identity_not_found') => Param('handle', new ParseHandlePipe(notFoundCode));
