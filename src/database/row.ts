/**
 * The snake_case name of a camelCase property: `organizationId` → `organization_id`.
 * Entities name their columns this way (test/database/schema.e2e-spec.ts holds them
 * to the migrations), so the type of a raw row follows from the entity.
 */
export type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
type Columns<E> = { [K in keyof E as E[K] extends Function ? never : K]: E[K] };

/**
 * A table's row as a statement returns it: the entity's columns under their column
 * names. The one description of a row's shape; select a part with `Pick`, and add
 * computed columns with `&`:
 *
 *   type KeyListRow = Pick<RowOf<ApiKey>, 'id' | 'scope' | 'created_at'> & { identity_handle: string | null };
 */
export type RowOf<E> = { [K in keyof Columns<E> & string as SnakeCase<K>]: Columns<E>[K] };

/**
 * A table's record as repositories hand it to services: the entity's columns under
 * their property names (camelCase), without the entity class. Statements alias their
 * columns (`identity_id AS "identityId"`) so that rows arrive in this shape.
 */
export type RecordOf<E> = Columns<E>;

/** A row as to_jsonb gives it (a batch's RETURNING rows, a row nested in another): timestamps are ISO strings. */
export type JsonRow<R> = { [K in keyof R]: R[K] extends Date ? string : R[K] };
