import 'reflect-metadata';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pino, { type Logger } from 'pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { createTestDatabase, dropDatabase, urlFor } from './database';
import { freePort, onFreePort } from './server-process';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** The database's name (another app may be started on it, see `startApp`). */
  database: string;
  db: DataSource;
  /** supertest bound to the in-process HTTP server. */
  http: () => ReturnType<typeof request>;
  /** Base URL of the listening server, for real HTTP clients. */
  baseUrl: string;
  close: () => Promise<void>;
}

/**
 * Starts the whole application on a fresh database cloned from the migrated
 * template, listening on an ephemeral loopback port. With `on`, a second instance
 * of the service on the database of an app already started (that app drops it).
 * With `logger`, the app logs there (tests that read the log lines).
 */
export async function startApp(env: Record<string, string> = {}, on?: TestApp, logger?: Logger): Promise<TestApp> {
  const database = on?.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: urlFor(database),
    MIGRATIONS_RUN: 'false',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    KEY_USAGE_FLUSH_MS: '50',
    // Suites sign agents up far more often than 10 an hour from one address.
    RATE_LIMIT_SIGNUPS_PER_HOUR: '100000',
    RATE_LIMIT_LOGIN_ATTEMPTS_PER_MINUTE: '100000',
    RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE: '100000',
    RATE_LIMIT_UPSTREAM_TESTS_PER_MINUTE: '100000',
    // Suites run in parallel: a suite that speaks gRPC asks for a port ('0': an ephemeral one).
    GRPC_PORT: 'off',
    // The metrics listener would take the same port in every suite: a suite that scrapes asks for '0'.
    METRICS_PORT: 'off',
    // CI runs some suites again with DATABASE_PIPELINE=off (src/database/README.md).
    DATABASE_PIPELINE: process.env.DATABASE_PIPELINE ?? '',
    ...env,
  });
  const dropOwn = async () => {
    if (!on) {
      await dropDatabase(database);
    }
  };
  const app = await createApp(config, logger ?? pino({ level: config.logLevel })).catch(async (error) => {
    await dropOwn();
    throw error;
  });
  try {
    // An ephemeral port, unless the test chose one (startAppAtOwnAddress).
    await app.listen(env.PORT ? config.port : 0, '127.0.0.1');
  } catch (error) {
    // A suite whose beforeAll throws here has no app to close: left open, its pools and
    // timers would keep Jest from exiting.
    try {
      await app.close();
    } finally {
      await dropOwn();
    }
    throw error;
  }
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const server = app.getHttpServer();
  return {
    app,
    config,
    database,
    db: app.get(DataSource),
    http: () => request(server),
    baseUrl,
    close: async () => {
      await app.close();
      await dropOwn();
    },
  };
}

/**
 * `startApp` with PUBLIC_BASE_URL its own address, for what names it (served cards, a
 * provider's redirect URI): on `port`, else on a free port, again on another should that be
 * taken before the app listens (onFreePort). `grpc`: on a free gRPC port of 127.0.0.1 too,
 * the address its cards name.
 */
export function startAppAtOwnAddress(
  env: Record<string, string> = {},
  { port, grpc = false }: { port?: number; grpc?: boolean } = {},
): Promise<TestApp> {
  const at = async (listen: number) =>
    startApp({
      PORT: String(listen),
      PUBLIC_BASE_URL: `http://127.0.0.1:${listen}`,
      ...(grpc ? { GRPC_PORT: String(await freePort()), GRPC_HOST: '127.0.0.1' } : {}),
      ...env,
    });
  return port === undefined ? onFreePort(at) : at(port);
}
