import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AtCommit, Database } from '../../src/database/database';
import { runPipeline } from '../../src/database/pipeline';
import { PipelineError } from '../../src/database/statement';
import { sql } from '../../src/database/sql';
import { afterCommit, beforeCommit, Tx, whenSettled } from '../../src/database/unit-of-work';
import { WriteBatch, WriteShape } from '../../src/database/write-batch';
import { withTimeout } from '../../src/database/with-timeout';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { pipelined, statementsOf } from '../support/statements';

/**
 * Database.transaction on PostgreSQL: BEGIN goes with the first statement, writes
 * handed over with `send` go with the next statement, reads AtCommit go with COMMIT —
 * each group one pipeline (src/database/pipeline.ts), one round trip — and a failure
 * anywhere rolls everything back. With DATABASE_PIPELINE=off the same groups go one
 * statement at a time (statementsOf records them as groups all the same).
 */
describe('transactions in pipelines', () => {
  let name: string;
  let dataSource: DataSource;
  let db: Database;
  let client: Client;

  beforeAll(async () => {
    name = await createTestDatabase();
    dataSource = await new DataSource({ type: 'postgres', url: urlFor(name), poolSize: 4 }).initialize();
    db = new Database(dataSource, { pipeline: pipelined });
    client = new Client({ connectionString: urlFor(name) });
    await client.connect();
    await client.query(`CREATE TABLE pipeline_notes (id int PRIMARY KEY, body text NOT NULL)`);
  });
  afterAll(async () => {
    await client.end();
    await dataSource.destroy();
    await dropDatabase(name);
  });
  beforeEach(() => client.query(`TRUNCATE pipeline_notes`));

  const count = async () => (await client.query(`SELECT count(*)::int AS n FROM pipeline_notes`)).rows[0].n as number;

  describe('runPipeline', () => {
    it('answers each statement with its own rows, in one round trip', async () => {
      const sent = await statementsOf(() =>
        runPipeline(client, [
          { name: 'p_insert', text: 'INSERT INTO pipeline_notes VALUES ($1, $2) RETURNING id', values: [1, 'one'] },
          { text: 'SELECT 2 AS two', values: [] },
          { name: 'p_count', text: 'SELECT count(*)::int AS n FROM pipeline_notes WHERE id >= $1', values: [0] },
        ]).then((results) => {
          expect(results.map((result) => result.rows)).toEqual([[{ id: 1 }], [{ two: 2 }], [{ n: 1 }]]);
          expect(results[0].rowCount).toBe(1);
        }),
      );
      expect(sent).toHaveLength(1);
    });

    it('a failing statement: its index and error, nothing after it runs, and the names it left out are prepared later', async () => {
      const failure = await runPipeline(client, [
        { name: 'p_insert', text: 'INSERT INTO pipeline_notes VALUES ($1, $2) RETURNING id', values: [2, 'two'] },
        { name: 'p_broken', text: 'INSERT INTO pipeline_notes VALUES ($1, $2)', values: [2, 'again'] },
        { name: 'p_after', text: 'INSERT INTO pipeline_notes VALUES ($1, $2)', values: [3, 'three'] },
      ]).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PipelineError);
      expect((failure as PipelineError).index).toBe(1);
      expect(((failure as PipelineError).cause as { constraint?: string }).constraint).toBe('pipeline_notes_pkey');
      // One Sync: the statements before the failure are rolled back with it (an implicit transaction).
      expect(await count()).toBe(0);
      // p_after's Parse was skipped by PostgreSQL: the connection must not think it prepared.
      await runPipeline(client, [
        { name: 'p_after', text: 'INSERT INTO pipeline_notes VALUES ($1, $2)', values: [3, 'three'] },
      ]);
      await client.query({ name: 'p_after', text: 'INSERT INTO pipeline_notes VALUES ($1, $2)', values: [4, 'four'] });
      expect(await count()).toBe(2);
    });

    it('a statement PostgreSQL cannot parse fails alone, and the connection goes on', async () => {
      const failure = await runPipeline(client, [{ name: 'p_bad', text: 'SELEC 1 WHERE $1', values: [true] }]).catch(
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PipelineError);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });
    it('a value the driver cannot convert fails before anything is written, the connection untouched', async () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const failure = await runPipeline(client, [
        { text: 'SELECT 1', values: [] },
        { name: 'p_json', text: 'SELECT $1::jsonb AS j', values: [circular] },
      ]).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PipelineError);
      expect((failure as PipelineError).index).toBe(1);
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });
  });

  describe('Database.transaction', () => {
    it('BEGIN with the first statement, a handed-over write with the next, COMMIT alone', async () => {
      const sent = await statementsOf(() =>
        db.transaction(async (tx) => {
          await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`, tx);
          const batch = new WriteBatch();
          batch.write(sql`INSERT INTO pipeline_notes VALUES (${2}, ${'two'})`);
          db.send(batch, tx);
          const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM pipeline_notes`, tx);
          expect(n).toBe(2); // the read sees the write that went before it
        }),
      );
      expect(sent.map((text) => text.split(';\n').map((statement) => statement.trim().split(/\s+/)[0]))).toEqual([
        ['BEGIN', 'INSERT'],
        ['WITH', 'SELECT'],
        ['COMMIT'],
      ]);
      expect(await count()).toBe(2);
    });

    it('statements asked for together go together, each answered with its own rows', async () => {
      const sent = await statementsOf(() =>
        db.transaction(async (tx) => {
          const [one, two] = await Promise.all([
            db.rows(sql`SELECT ${1}::int AS one`, tx),
            db.rows(sql`SELECT ${2}::int AS two`, tx),
          ]);
          expect([one, two]).toEqual([[{ one: 1 }], [{ two: 2 }]]);
        }),
      );
      expect(sent).toHaveLength(2);
      expect(sent[0].split(';\n')).toHaveLength(3); // BEGIN and both
    });

    it('a write handed over after a statement asked for in the same turn goes after it', async () => {
      await db.transaction(async (tx) => {
        const before = db.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM pipeline_notes WHERE id > ${0}`, tx);
        const batch = new WriteBatch();
        batch.write(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`);
        db.send(batch, tx);
        expect(await before).toEqual([{ n: 0 }]);
      });
      expect(await count()).toBe(1);
    });

    it('nothing joins a transaction once its COMMIT is on its way; AtCommit is for reads only', async () => {
      let late: Promise<unknown> | undefined;
      let misuse: unknown;
      await db.transaction(async (tx) => {
        await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`, tx);
        try {
          db.send(new WriteBatch(), new AtCommit(tx)); // an empty batch is nothing
          const batch = new WriteBatch();
          batch.write(sql`INSERT INTO pipeline_notes VALUES (${2}, ${'two'})`);
          db.send(batch, new AtCommit(tx));
        } catch (error) {
          misuse = error;
        }
        // A write handed over last goes with COMMIT; its rows arrive with COMMIT's answer.
        const last = new WriteBatch();
        last.write(sql`INSERT INTO pipeline_notes VALUES (${4}, ${'four'}) RETURNING id`, () => {
          late = db.execute(sql`INSERT INTO pipeline_notes VALUES (${3}, ${'too late'})`, tx);
          late.catch(() => undefined);
        });
        db.send(last, tx);
      });
      expect((misuse as Error).message).toMatch(/not AtCommit/);
      await expect(late).rejects.toThrow(/has ended/);
      expect(await count()).toBe(2);
    });

    it('a transaction that runs nothing sends nothing', async () => {
      const sent = await statementsOf(() => db.transaction(async () => 'nothing'));
      expect(sent).toEqual([]);
    });

    it('a read AtCommit goes with COMMIT, sees the writes, and answers after the commit', async () => {
      let read!: Promise<Array<{ n: number }>>;
      let committed = false;
      const sent = await statementsOf(() =>
        db.transaction(async (tx) => {
          await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`, tx);
          afterCommit(tx, () => void (committed = true));
          read = db.rows<{ n: number }>(
            sql`SELECT count(*)::int AS n FROM pipeline_notes WHERE id > ${0}`,
            new AtCommit(tx),
          );
        }),
      );
      expect(await read).toEqual([{ n: 1 }]);
      expect(committed).toBe(true);
      expect(sent).toHaveLength(2);
      expect(sent[1]).toMatch(/^SELECT count[\s\S]*;\nCOMMIT$/);
    });

    it('a failure rolls back every write, those waiting and those sent, and fails the reads AtCommit', async () => {
      let read!: Promise<unknown>;
      const failure = await db
        .transaction(async (tx) => {
          await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`, tx);
          read = db.rows(sql`SELECT count(*)::int AS n FROM pipeline_notes WHERE id > ${0}`, new AtCommit(tx));
          read.catch(() => undefined);
          beforeCommit(tx, async () => {
            await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'the same id'})`, tx);
          });
        })
        .catch((error: unknown) => error);
      expect((failure as { driverError?: { constraint?: string } }).driverError?.constraint).toBe(
        'pipeline_notes_pkey',
      );
      await expect(read).rejects.toBe(failure);
      expect(await count()).toBe(0);
      // The connection went back to the pool clean: the next transaction works.
      await db.transaction((tx) => db.execute(sql`INSERT INTO pipeline_notes VALUES (${5}, ${'five'})`, tx));
      expect(await count()).toBe(1);
    });

    it('whenSettled: after the commit and its after-commit hooks (one that throws too), or at once on a failure', async () => {
      const events: string[] = [];
      await db.transaction(async (tx) => {
        await db.execute(sql`INSERT INTO pipeline_notes VALUES (${1}, ${'one'})`, tx);
        void whenSettled(tx).then(() => events.push('settled'));
        afterCommit(tx, () => void events.push('after commit'));
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual(['after commit', 'settled']);

      let settled!: Promise<void>;
      const hookFailure = new Error('a hook failed');
      const hookFailed = db.transaction(async (tx) => {
        settled = whenSettled(tx);
        afterCommit(tx, () => {
          throw hookFailure;
        });
      });
      await expect(hookFailed).rejects.toBe(hookFailure);
      await settled; // resolved all the same

      // A failed one settles before its ROLLBACK is answered: here the ROLLBACK waits for that, 2 s at most.
      let settledFirst: Promise<void> | undefined;
      let rollbackWaited: 'settled' | 'timed out' | undefined;
      const query = Client.prototype.query;
      const rollbackHeld = jest.spyOn(Client.prototype, 'query').mockImplementation(function (
        this: Client,
        ...args: unknown[]
      ) {
        const text = (args[0] as { text?: string } | undefined)?.text;
        const run = () => (query as (...a: unknown[]) => unknown).apply(this, args);
        if (text !== 'ROLLBACK' || !settledFirst) {
          return run() as never;
        }
        const waited = withTimeout(
          settledFirst.then(() => 'settled' as const),
          2000,
          () => new Error('not settled'),
        );
        return waited
          .catch(() => 'timed out' as const)
          .then((outcome) => {
            rollbackWaited = outcome;
            return run();
          }) as never;
      });
      try {
        const failed = db.transaction(async (tx) => {
          await db.execute(sql`INSERT INTO pipeline_notes VALUES (${2}, ${'two'})`, tx);
          settledFirst = whenSettled(tx);
          await db.execute(sql`INSERT INTO pipeline_notes VALUES (${2}, ${'the same id'})`, tx);
        });
        await expect(failed).rejects.toMatchObject({ driverError: { constraint: 'pipeline_notes_pkey' } });
      } finally {
        rollbackHeld.mockRestore();
      }
      expect(rollbackWaited).toBe('settled');
      expect(await count()).toBe(1); // the first transaction's row only: the ROLLBACK went
      expect(() => whenSettled(new AtCommit(new Tx(client)))).toThrow('not AtCommit');
    });

    it('a write that fails while waiting fails the statement that carried it, with its own error', async () => {
      const failure = await db
        .transaction(async (tx) => {
          const batch = new WriteBatch();
          batch.write(sql`INSERT INTO pipeline_notes VALUES (${1}, ${null})`);
          db.send(batch, tx);
          await db.rows(sql`SELECT ${1}::int AS one`, tx);
        })
        .catch((error: unknown) => error);
      expect((failure as Error).message).toMatch(/null value/);
      expect((failure as { query?: string }).query).toMatch(/INSERT INTO pipeline_notes/);
      expect(await count()).toBe(0);
    });
  });

  describe('group commit (Database.batch)', () => {
    it('a merged write whose rows name no batch fails each batch of its group once it has committed, and sends nothing again', async () => {
      // Wrong on purpose: what it returns is not the id it was given, so no row finds its batch.
      const misrouted = new WriteShape(
        {
          n: [
            ['id', 'int'],
            ['body', 'text'],
          ],
        },
        ({ n }) => sql`INSERT INTO pipeline_notes (id, body) SELECT n.id, n.body FROM ${n} RETURNING id + 1000 AS id`,
        { returned: 'id', set: 'n', column: 'id' },
      );
      const write = (id: number) =>
        db.batch((batch) => batch.write(misrouted.of({ n: [[id, `note ${id}`]] }), () => undefined));
      // The first goes alone (nothing to route); the next two wait for it and go together, merged.
      const [alone, ...together] = await Promise.allSettled([write(1), write(2), write(3)]);
      expect(alone.status).toBe('fulfilled');
      for (const outcome of together) {
        expect(outcome.status).toBe('rejected');
        expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/unknown id/);
      }
      expect(await count()).toBe(3);
    });
  });
});
