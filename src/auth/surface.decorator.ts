import { applyDecorators, SetMetadata } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiExtension,
  ApiOAuth2,
  ApiOperation,
  ApiResponse,
  ApiSecurity,
} from '@nestjs/swagger';
import { describeSurface, SURFACES, type SurfaceName } from './surfaces';

export const SURFACE_KEY = 'a2a:surface';

/** How an operation reads in the OpenAPI document (and in the generated client). */
export interface OperationDoc {
  /** A stable, readable operationId: the generated client's method name (e.g. `mintApiKey`). */
  id?: string;
  /** One line for users, e.g. "Mint an API key". */
  summary?: string;
  /** More words for the description, after the credential line. */
  notes?: string;
}

/**
 * Declares which row of the credential table a route belongs to. It carries both
 * the guard's metadata and the OpenAPI security entry, so the docs cannot drift
 * from what is enforced. A route without it is unreachable (the guard denies).
 */
export function Surface(name: SurfaceName, operation?: string | OperationDoc) {
  const policy = SURFACES[name];
  const description = describeSurface(name);
  const { summary, id, notes } =
    typeof operation === 'string' ? { summary: operation, id: undefined, notes: undefined } : (operation ?? {});
  const decorators = [
    SetMetadata(SURFACE_KEY, name),
    ApiOperation({
      summary,
      ...(id ? { operationId: id } : {}),
      description: `**Credential:** ${description}${notes ? `\n\n${notes}` : ''}`,
    }),
    ApiExtension('x-surface', name),
  ];
  if (policy.credentials.length > 0) {
    const kinds: readonly string[] = policy.credentials;
    if (kinds.includes('admin') || kinds.includes('agent')) {
      decorators.push(ApiSecurity('apiKey'), ApiOAuth2([], 'accessToken'));
    }
    if (kinds.includes('console')) {
      decorators.push(ApiBearerAuth('consoleSession'), ApiCookieAuth('consoleCookie'));
    }
    decorators.push(
      ApiResponse({ status: 401, description: 'Credential missing or invalid.' }),
      ApiResponse({ status: 403, description: 'Credential valid but not permitted here.' }),
    );
  }
  return applyDecorators(...decorators);
}

/** Shorthand for `@Surface('public')`. */
export const Public = (operation?: string | OperationDoc) => Surface('public', operation);
