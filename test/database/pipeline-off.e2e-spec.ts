import { Client, Query } from 'pg';
import { DataSource } from 'typeorm';
import { AtCommit, Database } from '../../src/database/database';
import { sql } from '../../src/database/sql';
import { WriteBatch } from '../../src/database/write-batch';
import { agentPair, reply, submitTask } from '../support/a2a';
import { startApp } from '../support/app';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';

// With DATABASE_PIPELINE=off nothing may load pipeline.ts, the module on node-postgres's internals.
jest.mock('../../src/database/pipeline', () => {
  throw new Error('pipeline.ts was loaded');
});

/** What `work` hands node-postgres's Client.query: the driver's public API takes a config object, never a query object of ours. */
async function queriesOf(work: () => Promise<unknown>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    seen.push(args[0]);
    return query.apply(this, args) as never;
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

/** A plain `{ name?, text, values? }` (or a text), as a caller of the public API writes it. */
const publicQuery = (config: unknown) =>
  typeof config === 'string' ||
  (typeof config === 'object' &&
    config !== null &&
    !(config instanceof Query) &&
    typeof (config as { submit?: unknown }).submit !== 'function' &&
    Object.keys(config).every((key) => ['name', 'text', 'values'].includes(key)));

/**
 * DATABASE_PIPELINE=off (src/database/README.md): a transaction's statements go one at a
 * time through node-postgres's public API — BEGIN … COMMIT on one connection, prepared
 * statements still named — and the pipeline module is never entered (here it throws when loaded).
 */
describe('DATABASE_PIPELINE=off: the public API only', () => {
  let name: string;
  let dataSource: DataSource;
  let db: Database;

  beforeAll(async () => {
    name = await createTestDatabase();
    dataSource = await new DataSource({ type: 'postgres', url: urlFor(name), poolSize: 4 }).initialize();
    db = new Database(dataSource, { pipeline: false });
    await dataSource.query(`CREATE TABLE off_notes (id int PRIMARY KEY, body text NOT NULL)`);
  });
  afterAll(async () => {
    await dataSource.destroy();
    await dropDatabase(name);
  });

  it('the pipeline is what this file refuses to load', () => {
    expect(() => new Database(dataSource, { pipeline: true })).toThrow('pipeline.ts was loaded');
  });

  it('a transaction: BEGIN, each statement in turn, named when it has parameters, COMMIT — on one connection', async () => {
    let read!: Promise<Array<{ n: number }>>;
    const connections = new Set<unknown>();
    const seen = await queriesOf(() =>
      db.transaction(async (tx) => {
        await db.execute(sql`INSERT INTO off_notes VALUES (${1}, ${'one'})`, tx);
        const batch = new WriteBatch();
        batch.write(sql`INSERT INTO off_notes VALUES (${2}, ${'two'})`);
        db.send(batch, tx);
        const [one, two] = await Promise.all([
          db.rows(sql`SELECT ${1}::int AS one`, tx),
          db.rows(sql`SELECT ${2}::int AS two`, tx),
        ]);
        expect([one, two]).toEqual([[{ one: 1 }], [{ two: 2 }]]);
        read = db.rows(sql`SELECT count(*)::int AS n FROM off_notes WHERE id > ${0}`, new AtCommit(tx));
        connections.add(tx.client);
      }),
    );
    expect(await read).toEqual([{ n: 2 }]);
    expect(seen.every(publicQuery)).toBe(true);
    const texts = seen.map((config) => (config as { text: string }).text.trim().split(/\s+/)[0]);
    expect(texts).toEqual(['BEGIN', 'INSERT', 'WITH', 'SELECT', 'SELECT', 'SELECT', 'COMMIT']);
    const named = seen.filter((config) => ((config as { values: unknown[] }).values ?? []).length > 0);
    expect(named.every((config) => /^s_[0-9a-f]{20}$/.test((config as { name?: string }).name ?? ''))).toBe(true);
    expect(connections.size).toBe(1);
  });

  it('a failure rolls the transaction back with ROLLBACK, and the next one works', async () => {
    const seen = await queriesOf(async () => {
      const failure = await db
        .transaction(async (tx) => {
          await db.execute(sql`INSERT INTO off_notes VALUES (${10}, ${'ten'})`, tx);
          await db.execute(sql`INSERT INTO off_notes VALUES (${10}, ${'again'})`, tx);
        })
        .catch((error: unknown) => error);
      expect((failure as { driverError?: { constraint?: string } }).driverError?.constraint).toBe('off_notes_pkey');
    });
    expect(seen.every(publicQuery)).toBe(true);
    expect(seen.map((config) => (config as { text: string }).text.split(/\s+/)[0])).toEqual([
      'BEGIN',
      'INSERT',
      'INSERT',
      'ROLLBACK',
    ]);
    await db.transaction((tx) => db.execute(sql`INSERT INTO off_notes VALUES (${11}, ${'eleven'})`, tx));
    const rows = await dataSource.query(`SELECT id FROM off_notes WHERE id >= 10 ORDER BY id`);
    expect(rows).toEqual([{ id: 11 }]);
  });

  it('the app with DATABASE_PIPELINE=off sends and replies through the public API only', async () => {
    const t = await startApp({ DATABASE_PIPELINE: 'off', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    try {
      expect(t.config.databasePipeline).toBe(false);
      const { requester, worker } = await agentPair(t);
      const seen = await queriesOf(async () => {
        const task = await submitTask(t, requester, worker);
        await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
        await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.filter((config) => !publicQuery(config))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
