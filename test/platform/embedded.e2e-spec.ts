import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { PASSWORD } from '../support/fixtures';
import { startServerProcess, type ServerProcess } from '../support/server-process';

/**
 * No DATABASE_URL: the server runs on an embedded PostgreSQL (PGlite) under
 * DATA_DIR with the same migrations. Run as a real process, as `npm start` does.
 */
describe('embedded database (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-embedded-'));
  let server: ServerProcess | undefined;
  const start = async () => (server = await startServerProcess({ DATA_DIR: dataDir }));
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('migrates, serves, keeps its data across a restart, and shuts down cleanly', async () => {
    let s = await start();
    expect((await request(s.baseUrl).get('/readyz').expect(200)).body).toEqual({
      status: 'ready',
      components: { database: 'healthy' },
    });
    const session = await request(s.baseUrl)
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Local', email: 'me@local.test', password: PASSWORD })
      .expect(201);
    const key = (
      await request(s.baseUrl)
        .post('/api/v1/api-keys')
        .set('Authorization', `Bearer ${session.body.token}`)
        .send({ scope: 'admin' })
        .expect(201)
    ).body.key;
    expect(await s.stop('SIGTERM')).toBe(0);

    s = await start();
    const self = await request(s.baseUrl).get('/api-keys/self').set('X-API-Key', key).expect(200);
    expect(self.body).toMatchObject({ scope: 'admin', status: 'active' });
    await request(s.baseUrl)
      .post('/api/v1/console/login')
      .send({ email: 'me@local.test', password: PASSWORD })
      .expect(200);
  });

  it('keeps concurrent transactions atomic: rollbacks of failing requests never undo racing successes', async () => {
    const s = await start();
    const session = await request(s.baseUrl)
      .post('/api/v1/console/login')
      .send({ email: 'me@local.test', password: PASSWORD })
      .expect(200);
    const auth = { Authorization: `Bearer ${session.body.token}` };
    // Half the requests open a transaction and fail inside it (no such identity →
    // ROLLBACK); the other half commit a new key. On one shared connection without
    // serialization, a ROLLBACK would take racing inserts with it.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        request(s.baseUrl)
          .post('/api/v1/api-keys')
          .set(auth)
          .send(
            i % 2 === 0
              ? { scope: 'admin' }
              : { scope: 'agent', scoped_identity_id: '00000000-0000-4000-8000-000000000000' },
          ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 201 : 404)));
    for (const minted of results.filter((r) => r.status === 201)) {
      await request(s.baseUrl).get('/api-keys/self').set('X-API-Key', minted.body.key).expect(200);
    }
  });
});
