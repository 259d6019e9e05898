import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { createLogger, JsonLogger } from './common/logger';
import { ConfigError, loadConfig } from './config/config';
import { ConsoleService } from './console/console.service';
import { KeysService } from './keys/keys.service';

const USAGE = `usage: npm run cli -- bootstrap --org NAME --email EMAIL [--password-stdin]

Creates an organization, its first Console user and an admin-scoped API key.
The password (generated unless --password-stdin) and the key are printed once.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
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
  if (!values.org || !values.email) fail(USAGE);
  const password = values['password-stdin'] ? await readStdin() : randomBytes(18).toString('base64url');
  if (password.length < 12) fail('the password must be at least 12 characters');

  // A one-shot command serves no protocol: no gRPC server.
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, GRPC_PORT: 'off' });
  const logger = createLogger(config.logLevel);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), { logger: new JsonLogger(logger) });
  try {
    const consoleService = app.get(ConsoleService);
    const keys = app.get(KeysService);
    const result = await app.get(DataSource).transaction(async (em) => {
      const { user, organization } = await consoleService.createOrganizationWithUser(values.org!, values.email!, password, em);
      const minted = await keys.mintWith(em, {
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

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (command !== 'bootstrap') fail(USAGE);
  await bootstrap(rest);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) fail(`configuration error: ${error.message}`);
  const code = (error as { code?: string }).code;
  fail(code === 'email_taken' ? 'a Console user with that email already exists' : `bootstrap failed: ${error instanceof Error ? error.message : String(error)}`);
});
