import { PassThrough } from 'node:stream';
import { Client, Connection, Query } from 'pg';

/**
 * The canary: what pipeline.ts relies on inside node-postgres, beyond its public API
 * (src/database/README.md lists it). Should a `pg` upgrade change any of it, this fails
 * first — then fix the pipeline, or run with DATABASE_PIPELINE=off until it is.
 */
describe("node-postgres's internals that the pipeline relies on", () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pkg = require('../../package.json') as { dependencies: Record<string, string> };

  it('`pg` is pinned to an exact version', () => {
    expect(pkg.dependencies.pg).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("pg/lib/utils' prepareValue converts a parameter as a plain query does, and throws on what it cannot", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };
    expect(prepareValue({ a: 1 })).toBe('{"a":1}');
    expect(prepareValue(null)).toBeNull();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => prepareValue(circular)).toThrow();
  });

  it("Query: a subclass's fields (queryMode, _results, _canceledDueToError) and the methods it overrides or inherits", () => {
    const query = new (Query as unknown as new (text: string) => Record<string, unknown>)('SELECT 1');
    expect(query.queryMode).toBeUndefined();
    expect(query._canceledDueToError).toBe(false);
    expect(query._results).toBe(query._result);
    for (const method of [
      'submit',
      'prepare',
      'handleError',
      'handleReadyForQuery',
      'handleRowDescription',
      'handleDataRow',
      'handleCommandComplete',
    ]) {
      expect(typeof (Query.prototype as unknown as Record<string, unknown>)[method]).toBe('function');
    }
  });

  it("Query.submit: with queryMode 'extended', calls prepare(connection) once, inside the socket's cork/uncork", () => {
    const calls: string[] = [];
    class Probe extends (Query as unknown as new (text: string) => { queryMode?: string }) {
      prepare(): void {
        calls.push('prepare');
      }
    }
    const probe = new Probe('SELECT 1;\nSELECT 2');
    probe.queryMode = 'extended';
    const connection = {
      parsedStatements: {},
      submittedNamedStatements: {},
      stream: { cork: () => calls.push('cork'), uncork: () => calls.push('uncork') },
      query: () => calls.push('simple query'),
    };
    const error = (probe as unknown as { submit(connection: unknown): Error | null }).submit(connection);
    expect(error).toBeNull();
    expect(calls).toEqual(['cork', 'prepare', 'uncork']);
  });

  it('Query gathers one result per CommandComplete into _results, each with its command (null until it completes)', () => {
    const query = new (
      Query as unknown as new (text: string) => {
        _results: unknown;
        handleRowDescription(msg: unknown): void;
        handleDataRow(msg: unknown): void;
        handleCommandComplete(msg: unknown, connection: unknown): void;
      }
    )('x');
    expect((query._results as { command: unknown }).command).toBeNull();
    query.handleRowDescription({ fields: [{ name: 'n', dataTypeID: 25, format: 'text' }] });
    query.handleDataRow({ fields: ['one'] });
    query.handleCommandComplete({ text: 'SELECT 1' }, {});
    query.handleRowDescription({ fields: [{ name: 'm', dataTypeID: 25, format: 'text' }] });
    query.handleCommandComplete({ text: 'SELECT 0' }, {});
    const results = query._results as Array<{ command: string | null; rows: unknown[]; rowCount: number | null }>;
    expect(results.map(({ command, rows, rowCount }) => ({ command, rows, rowCount }))).toEqual([
      { command: 'SELECT', rows: [{ n: 'one' }], rowCount: 1 },
      { command: 'SELECT', rows: [], rowCount: 0 },
    ]);
  });

  it("Connection: the prepared-statement records, the extended protocol's message methods, the 'parseComplete' event", () => {
    const connection = new Connection() as unknown as Record<string, unknown> & {
      attachListeners(stream: PassThrough): void;
      on(event: string, listener: () => void): void;
    };
    expect(connection.parsedStatements).toEqual({});
    expect(connection.submittedNamedStatements).toEqual({});
    for (const method of ['parse', 'bind', 'describe', 'execute', 'sync', 'removeListener']) {
      expect(typeof connection[method]).toBe('function');
    }
    const stream = new PassThrough();
    let parsed = 0;
    connection.on('parseComplete', () => (parsed += 1));
    connection.attachListeners(stream);
    stream.write(Buffer.from([0x31, 0, 0, 0, 4])); // ParseComplete
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(parsed).toBe(1);
        resolve();
      }),
    );
  });

  it('Client.query runs a submittable (an object with submit) as it is', () => {
    const client = new Client();
    const submittable = { submit: jest.fn(), handleError: jest.fn() };
    expect(client.query(submittable as never)).toBe(submittable);
  });
});
