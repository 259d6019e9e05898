import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Database } from './database/database';
import { AppModule } from './app.module';
import { createLogger, JsonLogger } from './common/logger';
import { ConfigError, loadConfig } from './config/config';
import { ConsoleService } from './console/console.service';
import { explainConnectionError } from './database/database-errors';
import { EmbeddedDatabaseInUseError } from './database/pglite-pool';
import { CardSigner } from './directory/card-signer';
import { KeysService } from './keys/keys.service';

const USAGE = `usage: npm run cli -- bootstrap --org NAME --email EMAIL [--password-stdin]
       npm run cli -- rotate-card-key
       (in the image: node dist/cli.js …)

bootstrap: creates an organization, its first Console user and an admin-scoped API key.
The password (generated unless --password-stdin) and the key are printed once.

rotate-card-key: a new generated Agent Card signing key becomes current; the one it
replaces stays listed in /.well-known/jwks.json as the previous key. (With
CARD_SIGNING_KEY_FILE configured, replace that file and restart instead.)

On the embedded database, run these while the server is stopped.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

async function bootstrap(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: 'string' }, email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
    strict: true,
  });
  if (!values.org || !values.email) {
    fail(USAGE);
  }
  const password = values['password-stdin'] ? await readStdin() : randomBytes(18).toString('base64url');
  if (password.length < 12) {
    fail('the password must be at least 12 characters');
  }

  // A one-shot command serves no protocol and no metrics: no gRPC server, no metrics listener (its port is the server's).
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, GRPC_PORT: 'off', METRICS_PORT: 'off' });
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), {
    logger: new JsonLogger(logger),
    abortOnError: false,
  }).catch((error: unknown) => {
    if (error instanceof EmbeddedDatabaseInUseError) {
      fail(
        `${error.message}, most likely a running server: stop it and run bootstrap again, or sign up through it (POST /api/v1/console/signup, or the Console)`,
      );
    }
    const reason = explainConnectionError(error, config);
    if (reason) {
      fail(reason);
    }
    throw error;
  });
  try {
    const consoleService = app.get(ConsoleService);
    const keys = app.get(KeysService);
    const result = await app.get(Database).transaction(async (tx) => {
      const { user, organization } = await consoleService.createOrganizationWithUser(
        values.org!,
        values.email!,
        password,
        tx,
      );
      const minted = await keys.mintWith(tx, {
        scope: 'admin',
        organizationId: organization.id,
        label: 'bootstrap',
        createdBy: { type: 'console_user', id: user.id },
      });
      return { user, organization, minted };
    });
    const lines = [
      `organization: ${result.organization.name} (${result.organization.id})`,
      `console user: ${result.user.email}`,
      ...(values['password-stdin'] ? [] : [`password:     ${password}`]),
      `admin key:    ${result.minted.key}`,
      'The key and password are shown only now; store them safely.',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await app.close();
  }
}

async function rotateCardKey(args: string[]): Promise<void> {
  if (args.length > 0) {
    fail(USAGE);
  }
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, METRICS_PORT: 'off' });
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), {
    logger: new JsonLogger(logger),
  });
  try {
    const { kid, previous } = await app.get(CardSigner).rotate();
    process.stdout.write(
      `card signing key: ${kid} (current)\n${previous ? `previous key:     ${previous} (still listed in the JWKS)\n` : ''}`,
    );
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'bootstrap') {
    return bootstrap(rest);
  }
  if (command === 'rotate-card-key') {
    return rotateCardKey(rest);
  }
  fail(USAGE);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    fail(`configuration error: ${error.message}`);
  }
  const code = (error as { code?: string }).code;
  fail(
    code === 'email_taken'
      ? 'a Console user with that email already exists'
      : `failed: ${error instanceof Error ? error.message : String(error)}`,
  );
});
