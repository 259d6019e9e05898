import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { createApiClient } from '../../client';
import { startApp, type TestApp } from '../support/app';
import { mintAdminKey, signup } from '../support/fixtures';

describe('The generated TypeScript client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('matches the OpenAPI document the server serves (run `npm run client:generate` when this fails)', async () => {
    // openapi-typescript is loaded by Node itself (its dependencies are ES modules Jest cannot load).
    const root = resolve(__dirname, '../..');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        'scripts/client-generate.ts',
        '--from',
        `${t.baseUrl}/api/openapi.json`,
      ],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    );
    const committed = readFileSync(resolve(root, 'client/schema.ts'), 'utf8');
    expect(stdout.length).toBeGreaterThan(1000);
    expect(stdout).toBe(committed);
  });

  it('calls the service with an admin key', async () => {
    const account = await signup(t);
    const adminKey = await mintAdminKey(t, account);
    const api = createApiClient({ baseUrl: t.baseUrl, apiKey: adminKey });
    const { data, error, response } = await api.GET('/api/v1/api-keys', { params: { query: { scope: 'admin' } } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(JSON.stringify(data)).toContain(adminKey.slice(0, 12));
  });
});
