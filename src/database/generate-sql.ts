import { SpanKind } from '@opentelemetry/api';
import { inLeafSpan, tracingEnabled } from '../tracing/tracing';
import { WriteBatch } from './write-batch';

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

/**
 * Also the database span of each repository method: with tracing on, a CLIENT span
 * named `<Repository>.<method>` (never by parameter values) around its statements.
 */
export function GenerateSql(...examples: SqlExample[]): MethodDecorator {
  return (target, method, descriptor: PropertyDescriptor) => {
    registry.push({
      owner: target.constructor,
      method: String(method),
      examples: examples.length > 0 ? examples : [{ params: [] }],
    });
    const original = descriptor.value as (...args: unknown[]) => Promise<unknown>;
    const name = `${target.constructor.name}.${String(method)}`;
    descriptor.value = function traced(this: unknown, ...args: unknown[]) {
      if (!tracingEnabled()) {
        return original.apply(this, args);
      }
      return inLeafSpan(
        name,
        { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'code.function.name': name } },
        () => original.apply(this, args),
      );
    };
    return descriptor;
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
  /** A write batch: the test sends what the method queued in it (a fresh one each run). */
  BATCH: new WriteBatch(),
} as const;
