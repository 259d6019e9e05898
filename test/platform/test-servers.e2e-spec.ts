import { createServer, type Server } from 'node:net';
import { NestApplication } from '@nestjs/core';
import { startApp } from '../support/app';
import * as database from '../support/database';
import { onFreePort } from '../support/server-process';

/**
 * The suites' own servers on a port chosen before they listen (PUBLIC_BASE_URL must name
 * it): another process may take the port meanwhile. CI once met that, and the suite's
 * half-started app then kept Jest from exiting until CI's time ran out.
 */
describe('a test server whose port is taken before it listens', () => {
  let taken: Server;
  let port: number;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('does not start, and leaves no app and no database behind', async () => {
    const created = jest.spyOn(database, 'createTestDatabase');
    const closed = jest.spyOn(NestApplication.prototype, 'close');
    try {
      await expect(startApp({ PORT: String(port) })).rejects.toThrow(/EADDRINUSE/);
      // Closed: its pools and timers no longer hold the run open.
      expect(closed).toHaveBeenCalledTimes(1);
      const name = await created.mock.results[0].value;
      const left = await database.withServer((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
      expect(left.rowCount).toBe(0);
    } finally {
      created.mockRestore();
      closed.mockRestore();
    }
  });

  it('starts again on another port (onFreePort)', async () => {
    const tried: number[] = [];
    const t = await onFreePort((free) => {
      tried.push(free);
      return startApp({ PORT: String(tried.length === 1 ? port : free), PUBLIC_BASE_URL: `http://127.0.0.1:${free}` });
    });
    try {
      expect(tried).toHaveLength(2);
      expect(t.baseUrl).toBe(`http://127.0.0.1:${tried[1]}`);
      await t.http().get('/healthz').expect(200);
    } finally {
      await t.close();
    }
  });

  it('gives up on any other failure at once', async () => {
    let calls = 0;
    await expect(
      onFreePort(async () => {
        calls++;
        throw new Error('the database is not there');
      }),
    ).rejects.toThrow('the database is not there');
    expect(calls).toBe(1);
  });
});
