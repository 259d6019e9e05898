import { readdirSync, readFileSync, writeFileSync, existsSync, unlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DataSource, type QueryRunner } from 'typeorm';
import { Database, Tx } from '../../src/database/database';
import { sqlExamples } from '../../src/database/generate-sql';
import type { Sql } from '../../src/database/sql';
import { WriteBatch } from '../../src/database/write-batch';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';

/**
 * Every repository statement, checked in under src/database/queries/ (see
 * src/database/generate-sql.ts). `UPDATE_SQL=1 npx jest test/database/generated-sql`
 * rewrites the files; commit them with the change.
 */
const ROOT = join(__dirname, '../..');
const QUERIES = join(ROOT, 'src/database/queries');

function repositoryFiles(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return repositoryFiles(path);
    }
    return entry.name.endsWith('.repository.ts') ? [path] : [];
  });
}

/** A Database that runs everything on one connection inside an open transaction, and records it. */
class RecordingDatabase extends Database {
  readonly statements: string[] = [];

  constructor(
    dataSource: DataSource,
    private readonly runner: QueryRunner,
  ) {
    super(dataSource);
  }

  /** Writes handed over with `send`, run before the next statement (as a transaction sends them). */
  private readonly handedOver: Sql[] = [];

  protected override async run(query: Sql, _tx?: Tx): Promise<{ records: unknown[]; affected?: number }> {
    for (let write = this.handedOver.shift(); write; write = this.handedOver.shift()) {
      await this.record(write);
    }
    return this.record(query);
  }

  override send(batch: WriteBatch, _tx: Tx): void {
    if (!batch.isEmpty) {
      this.handedOver.push(batch.statement());
    }
  }

  override sendCheck(check: Sql, _tx: Tx): void {
    this.handedOver.push(check);
  }

  /** Runs what is still waiting. */
  async drain(): Promise<void> {
    for (let write = this.handedOver.shift(); write; write = this.handedOver.shift()) {
      await this.record(write);
    }
  }

  private async record(query: Sql): Promise<{ records: unknown[]; affected?: number }> {
    this.statements.push(query.text);
    const result = await this.runner.query(query.text, [...query.values], true);
    return { records: Array.isArray(result.records) ? result.records : [], affected: result.affected };
  }

  override async prepared<R>(name: string, query: Sql): Promise<R[]> {
    return this.run(query).then((result) => result.records as R[]);
  }

  override transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    // Statements of the transaction are recorded by `run`; the Tx only carries its hooks.
    return work(new Tx(this.runner.connection.driver as never));
  }
}

/** Common indentation removed, blank edges trimmed. */
function tidy(text: string): string {
  const lines = text
    .replace(/\t/g, '  ')
    .split('\n')
    .map((line) => line.trimEnd());
  while (lines.length && !lines[0].trim()) {
    lines.shift();
  }
  while (lines.length && !lines[lines.length - 1].trim()) {
    lines.pop();
  }
  const indents = lines
    .slice(1)
    .filter((line) => line.trim())
    .map((line) => line.length - line.trimStart().length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [
    lines[0].trim(),
    ...lines.slice(1).map((line) => line.slice(Math.min(cut, line.length - line.trimStart().length))),
  ].join('\n');
}

/** Errors a wrong statement causes (syntax, unknown column or table, wrong type): SQLSTATE class 42. */
const isStatementError = (error: unknown) =>
  /^42/.test(String((error as { driverError?: { code?: string } }).driverError?.code ?? ''));

describe('generated SQL (src/database/queries)', () => {
  let name: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    name = await createTestDatabase();
    dataSource = await new DataSource({ type: 'postgres', url: urlFor(name) }).initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(name);
  });

  it('every repository statement is valid and matches the checked-in file', async () => {
    const files = repositoryFiles();
    for (const file of files) {
      require(file);
    }
    const byFile = new Map<string, string[]>();
    const fileOf = new Map<string, string>();
    for (const file of files) {
      const exported = Object.values(require(file) as Record<string, unknown>);
      for (const value of exported) {
        if (typeof value === 'function') {
          fileOf.set((value as { name: string }).name, file);
        }
      }
    }

    for (const { owner, method, examples } of sqlExamples()) {
      const file = fileOf.get(owner.name);
      if (!file) {
        continue;
      }
      const out = byFile.get(file) ?? [];
      byFile.set(file, out);
      for (const example of examples) {
        const runner = dataSource.createQueryRunner();
        await runner.startTransaction();
        const db = new RecordingDatabase(dataSource, runner);
        const repository = new (
          owner as new (db: Database) => Record<string, (...args: unknown[]) => Promise<unknown>>
        )(db);
        // A write batch is filled by the method and sent after it, a fresh one each time.
        const params = example.params.map((param) => (param instanceof WriteBatch ? new WriteBatch() : param));
        try {
          await repository[method](...params);
          for (const param of params) {
            if (param instanceof WriteBatch) {
              db.send(param, new Tx(dataSource.driver as never));
            }
          }
          await db.drain();
        } catch (error) {
          if (isStatementError(error)) {
            throw new Error(`${owner.name}.${method}: ${(error as Error).message}`);
          }
        } finally {
          await runner.rollbackTransaction();
          await runner.release();
        }
        const title = `-- ${owner.name}.${method}${example.name ? ` (${example.name})` : ''}`;
        if (db.statements.length === 0) {
          throw new Error(`${owner.name}.${method} ran no statement with its example`);
        }
        out.push([title, ...db.statements.map((text) => `${tidy(text)};`)].join('\n'));
      }
    }

    const header = '-- Generated by test/database/generated-sql.e2e-spec.ts; do not edit (UPDATE_SQL=1 rewrites it).\n';
    const expected = new Map(
      [...byFile].map(([file, blocks]) => [
        join(QUERIES, file.split('/').pop()!.replace(/\.ts$/, '.sql')),
        `${header}\n${blocks.join('\n\n')}\n`,
      ]),
    );
    const stale = readdirSync(QUERIES)
      .filter((f) => f.endsWith('.sql'))
      .map((f) => join(QUERIES, f))
      .filter((f) => !expected.has(f));
    if (process.env.UPDATE_SQL) {
      for (const [path, text] of expected) {
        writeFileSync(path, text);
      }
      for (const path of stale) {
        unlinkSync(path);
      }
    }
    expect(stale.map((path) => relative(ROOT, path))).toEqual([]);
    for (const [path, text] of expected) {
      const onDisk = existsSync(path) ? readFileSync(path, 'utf8') : '(missing)';
      expect(`${relative(ROOT, path)}\n${onDisk}`).toBe(`${relative(ROOT, path)}\n${text}`);
    }
  });

  it('every method of a repository is listed with an example', () => {
    const decorated = new Set(sqlExamples().map(({ owner, method }) => `${owner.name}.${method}`));
    const missing: string[] = [];
    for (const file of repositoryFiles()) {
      for (const value of Object.values(require(file) as Record<string, unknown>)) {
        if (typeof value !== 'function' || !/Repository$/.test((value as { name: string }).name)) {
          continue;
        }
        const proto = (value as { prototype: object }).prototype;
        for (const method of Object.getOwnPropertyNames(proto)) {
          if (method !== 'constructor' && !decorated.has(`${(value as { name: string }).name}.${method}`)) {
            missing.push(`${(value as { name: string }).name}.${method}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });
});
