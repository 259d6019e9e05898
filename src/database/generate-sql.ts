/**
 * Marks a repository method whose statements are checked in under
 * `src/database/queries/`: test/database/generated-sql.e2e-spec.ts calls it with each
 * example's arguments against a migrated database (in a transaction it rolls back),
 * records every statement it sends, and fails when the file on disk differs. A
 * change to a query is then a reviewable diff of SQL, not only of TypeScript (the
 * idea of immich's `@GenerateSql`).
 */
export interface SqlExample {
  /** Names the example when a method has several. */
  name?: string;
  /** The method's arguments. */
  params: unknown[];
}

export interface SqlExamples {
  /** The repository's class. */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  owner: Function;
  method: string;
  examples: SqlExample[];
}

const registry: SqlExamples[] = [];

export function GenerateSql(...examples: SqlExample[]): MethodDecorator {
  return (target, method) => {
    registry.push({ owner: target.constructor, method: String(method), examples: examples.length > 0 ? examples : [{ params: [] }] });
  };
}

/** Every decorated method of the repositories imported so far. */
export function sqlExamples(): readonly SqlExamples[] {
  return registry;
}

/** Stand-in arguments for examples. */
export const DummyValue = {
  UUID: '00000000-0000-4000-8000-000000000001',
  UUID_2: '00000000-0000-4000-8000-000000000002',
  DATE: new Date('2026-01-01T00:00:00.000Z'),
  STRING: 'example',
  HANDLE: 'example-agent',
  NUMBER: 1,
  BUFFER: Buffer.alloc(32),
} as const;
