import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';

/**
 * The migrations are the source of truth for the schema; the entities are the one
 * typed description of each table's rows (src/database/row.ts derives raw row types
 * from them). This holds the two together: every table has an entity, and every
 * entity names exactly its table's columns, with matching nullability and types.
 */
const ROOT = join(__dirname, '../..');

/** Tables that are bookkeeping of the migration tool, not of a module. */
const NOT_MODULE_TABLES = new Set(['schema_migrations']);

function entityFiles(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return entityFiles(path);
    }
    return entry.name.endsWith('.entity.ts') ? [path] : [];
  });
}

/** information_schema's data_type for a TypeORM column type. */
function family(type: string): string {
  const aliases: Record<string, string> = {
    varchar: 'character varying',
    'character varying': 'character varying',
    text: 'text',
    uuid: 'uuid',
    int: 'integer',
    integer: 'integer',
    bigint: 'bigint',
    boolean: 'boolean',
    bool: 'boolean',
    timestamptz: 'timestamp with time zone',
    'timestamp with time zone': 'timestamp with time zone',
    jsonb: 'jsonb',
    json: 'json',
    bytea: 'bytea',
    smallint: 'smallint',
    tsvector: 'tsvector',
    'double precision': 'double precision',
    inet: 'inet',
  };
  return aliases[type] ?? type;
}

describe('schema: entities describe the migrated tables', () => {
  let name: string;
  let dataSource: DataSource;
  let columns: Array<{
    table_name: string;
    column_name: string;
    is_nullable: 'YES' | 'NO';
    data_type: string;
    udt_name: string;
  }>;

  beforeAll(async () => {
    name = await createTestDatabase();
    dataSource = await new DataSource({ type: 'postgres', url: urlFor(name), entities: entityFiles() }).initialize();
    columns = await dataSource.query(
      `SELECT table_name, column_name, is_nullable, data_type, udt_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await dropDatabase(name);
  });

  it('every table has an entity and every column is described', () => {
    const described = new Set(
      dataSource.entityMetadatas.flatMap((m) => m.columns.map((c) => `${m.tableName}.${c.databaseName}`)),
    );
    const tables = new Set(dataSource.entityMetadatas.map((m) => m.tableName));
    const missing = columns
      .filter((c) => !NOT_MODULE_TABLES.has(c.table_name))
      .map((c) => (tables.has(c.table_name) ? `${c.table_name}.${c.column_name}` : c.table_name))
      .filter((key, index, all) => all.indexOf(key) === index)
      .filter((key) => !described.has(key));
    expect(missing).toEqual([]);
  });

  it('every entity column exists with its nullability and type', () => {
    const byKey = new Map(columns.map((c) => [`${c.table_name}.${c.column_name}`, c]));
    const wrong: string[] = [];
    for (const metadata of dataSource.entityMetadatas) {
      for (const column of metadata.columns) {
        const key = `${metadata.tableName}.${column.databaseName}`;
        const actual = byKey.get(key);
        if (!actual) {
          wrong.push(`${key}: no such column`);
          continue;
        }
        if ((actual.is_nullable === 'YES') !== column.isNullable) {
          wrong.push(`${key}: nullable ${actual.is_nullable} in the database`);
        }
        const expected = column.isArray
          ? 'ARRAY'
          : family(
              String(
                typeof column.type === 'function' ? (column.type as { name: string }).name.toLowerCase() : column.type,
              ),
            );
        const dbType = actual.data_type === 'USER-DEFINED' ? actual.udt_name : actual.data_type;
        if (expected !== dbType) {
          wrong.push(`${key}: ${String(column.type)} in the entity, ${dbType} in the database`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
