import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse, ApiSchema } from '@nestjs/swagger';
import type {
  OpenAPIObject,
  OperationObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** One field a validation failure names (`errors[]` of a 400). */
@ApiSchema({ name: 'FieldError' })
export class FieldErrorView {
  @ApiProperty({ example: 'email' })
  field: string;

  @ApiProperty({ example: 'email must be an email' })
  message: string;
}

/** RFC 9457 problem details, the body of every REST error (docs/api.md §9). */
@ApiSchema({ name: 'Problem' })
export class ProblemView {
  @ApiProperty({ example: 'about:blank' })
  type: string;

  @ApiProperty({ example: 'Conflict' })
  title: string;

  @ApiProperty({ example: 409 })
  status: number;

  @ApiProperty({ description: 'What went wrong, for people.' })
  detail: string;

  @ApiProperty({ description: 'A stable, machine-readable code.', example: 'last_member' })
  code: string;

  @ApiProperty({ description: 'The request id (also in the X-Request-Id header).' })
  request_id: string;

  @ApiPropertyOptional({
    type: [FieldErrorView],
    description: 'On validation failures (400): one entry per refused field.',
  })
  errors?: FieldErrorView[];
}

export const PROBLEM_SCHEMA_REF = '#/components/schemas/Problem';

/** The schema classes the document needs whatever the routes reference. */
export const EXTRA_MODELS: Type<unknown>[] = [ProblemView, FieldErrorView];

/** The success response of an operation, with the class that describes its body (none for 204). */
export function Returns(status: number, type?: Type<unknown> | [Type<unknown>], description?: string) {
  return ApiResponse({ status, type, description: description ?? (status === 204 ? 'Done; no content.' : 'Success.') });
}

/**
 * The errors an operation answers besides the generic ones (`completeResponses` adds
 * 400, 413, 415 and 429 where they apply; `@Surface` adds 401 and 403), each with
 * the codes it carries. Rendered with the shared Problem schema.
 */
export function Refuses(errors: Partial<Record<400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429, string>>) {
  return applyDecorators(
    ...Object.entries(errors).map(([status, description]) => ApiResponse({ status: Number(status), description })),
  );
}

const GENERIC_ERRORS: Record<number, string> = {
  400: 'The request is malformed or a field is invalid (`errors[]` names the fields).',
  404: 'No such resource, or not one the caller may see.',
  413: 'The request body is too large.',
  415: 'The request body is not JSON.',
  429: 'Rate limit exceeded (see `Retry-After` and the `RateLimit` headers).',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Adds what every operation answers without saying so: 429 (every route is rate
 * limited), 400 when it reads a body or query parameters, 404 when its path names a
 * resource, 413 and 415 when it reads a body; and renders each error response with
 * the Problem schema (or `errorSchema`, for operations that answer errors in
 * another shape, marked `x-error-schema`).
 */
export function completeResponses(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as (OperationObject & { 'x-error-schema'?: string }) | undefined;
      if (!operation) {
        continue;
      }
      const responses = operation.responses as Record<string, ResponseObject>;
      const parameters = (operation.parameters ?? []) as Array<{ in?: string }>;
      const add = (status: number) => {
        responses[String(status)] ??= { description: GENERIC_ERRORS[status] };
      };
      add(429);
      if (operation.requestBody) {
        [400, 413, 415].forEach(add);
      }
      if (parameters.some((p) => p.in === 'query')) {
        add(400);
      }
      if (parameters.some((p) => p.in === 'path')) {
        add(404);
      }
      const errorRef = operation['x-error-schema'] ?? PROBLEM_SCHEMA_REF;
      const errorType = operation['x-error-schema'] ? 'application/json' : 'application/problem+json';
      delete operation['x-error-schema'];
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) {
          continue;
        }
        response.description ||= GENERIC_ERRORS[Number(status)] ?? 'Refused.';
        response.content = { [errorType]: { schema: { $ref: errorRef } } };
      }
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return document;
}

/**
 * The schema of a list response, `{<plural>: [...], next_cursor}` (docs/api.md: every
 * list pages), named `name` in the document.
 */
export function PageOf(item: Type<unknown>, plural: string, name: string): Type<unknown> {
  class Page {
    @ApiProperty({
      type: String,
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last page.',
    })
    next_cursor: string | null;
  }
  ApiProperty({ type: [item] })(Page.prototype, plural);
  Object.defineProperty(Page, 'name', { value: name });
  return Page;
}
