import 'reflect-metadata';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pino from 'pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { createTestDatabase, dropDatabase, urlFor } from './database';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  db: DataSource;
  /** supertest bound to the in-process HTTP server. */
  http: () => ReturnType<typeof request>;
  /** Base URL of the listening server, for real HTTP clients. */
  baseUrl: string;
  /** The database's name (pass it to another startApp to share it). */
  database: string;
  close: () => Promise<void>;
}

export interface StartOptions {
  /**
   * Run on this existing database instead of a fresh one (a second instance, or a
   * restart). The app that created the database drops it on close; this one does not.
   */
  database?: string;
}

/**
 * Starts the whole application on a fresh database cloned from the migrated
 * template (or on an existing one), listening on an ephemeral loopback port.
 */
export async function startApp(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: urlFor(database),
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    KEY_USAGE_FLUSH_MS: '50',
    // Suites sign agents up far more often than 10 an hour from one address.
    RATE_LIMIT_SIGNUPS_PER_HOUR: '100000',
    ...env,
  });
  const app = await createApp(config, pino({ level: config.logLevel }));
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const server = app.getHttpServer();
  return {
    app,
    config,
    db: app.get(DataSource),
    http: () => request(server),
    baseUrl,
    database,
    close: async () => {
      await app.close();
      if (!options.database) await dropDatabase(database);
    },
  };
}
