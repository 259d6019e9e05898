import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SESSION_COOKIE } from './session-cookie';
import { completeResponses, EXTRA_MODELS } from './api-docs';

/** The OpenAPI document of every route the application serves (also read by `npm run client:generate`). */
export function buildOpenApiDocument(app: INestApplication, publicBaseUrl: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Agent-to-agent service')
    .setDescription(
      'Identities discover each other, delegate work over A2A, and are governed by API keys and an admission policy. ' +
        'Every operation states the credential it accepts.',
    )
    .setVersion('1')
    .addServer(publicBaseUrl)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Console session token' }, 'consoleSession')
    .addOAuth2(
      {
        type: 'oauth2',
        description:
          "An access token for an API key (docs/api.md §17): the key's scope and identity, as `Authorization: Bearer`.",
        flows: {
          clientCredentials: {
            tokenUrl: `${publicBaseUrl}/oauth/token`,
            scopes: { admin: 'An admin key', agent: 'An agent key' },
          },
        },
      },
      'accessToken',
    )
    .addCookieAuth(SESSION_COOKIE, { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE }, 'consoleCookie')
    .build();
  return completeResponses(
    SwaggerModule.createDocument(app, config, {
      extraModels: EXTRA_MODELS,
      // Routes without an explicit id: `ApiKeysController.list` → `apiKeysList`.
      operationIdFactory: (controller, method) =>
        `${controller.replace(/Controller$/, '').replace(/^./, (c) => c.toLowerCase())}${method.replace(/^./, (c) => c.toUpperCase()).replace(/\[(\d+)\]$/, '$1')}`,
    }),
  );
}

/** OpenAPI at /api/openapi.json and Swagger UI at /api/docs. */
export function setupOpenApi(app: INestApplication, publicBaseUrl: string): void {
  const document = buildOpenApiDocument(app, publicBaseUrl);
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: 'api/openapi.json',
    yamlDocumentUrl: 'api/openapi.yaml',
  });
}
