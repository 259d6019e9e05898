/**
 * `npm run client:generate`: writes client/schema.ts, the TypeScript types of the OpenAPI
 * document the application builds. The application is created in Nest's preview mode
 * (modules scanned, no provider instantiated), so no database is needed.
 *
 * `--from <url>` prints instead the source generated from a served document (the
 * client-consistency test compares it with the committed file).
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { AppModule } from '../src/app.module';
import { buildOpenApiDocument } from '../src/common/openapi';
import { loadConfig } from '../src/config/config';
import { schemaSource } from '../client/generate';

async function main(): Promise<void> {
  const from = process.argv.indexOf('--from');
  if (from > 0) {
    const res = await fetch(process.argv[from + 1]);
    if (!res.ok) {
      throw new Error(`GET ${process.argv[from + 1]} → ${res.status}`);
    }
    process.stdout.write(await schemaSource((await res.json()) as Record<string, unknown>));
    return;
  }
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused' });
  const logger = pino({ level: 'silent' });
  const app = await NestFactory.create(AppModule.forRoot(config, logger), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  const document = buildOpenApiDocument(app, config.publicBaseUrl);
  const target = resolve(__dirname, '../client/schema.ts');
  writeFileSync(target, await schemaSource(document as unknown as Record<string, unknown>));
  await app.close();
  process.stdout.write(`wrote ${target} (${Object.keys(document.paths).length} paths)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`client:generate failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
