import { Injectable, PipeTransform } from '@nestjs/common';
import { notFound } from './app-error';
import type { CodeWithStatus } from './error-codes';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string can name a row by id (anything else names none, and must not reach a uuid column). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** A resource id in the path; something that is not a UUID names no resource (404). */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, string> {
  constructor(
    private readonly notFoundCode: CodeWithStatus<404>,
    private readonly what: string,
  ) {}

  transform(value: string): string {
    if (!isUuid(value)) {
      throw notFound(this.notFoundCode, `No ${this.what} with that id.`);
    }
    return value.toLowerCase();
  }
}
