/** Deeper bodies are refused: recursive validation and mapping would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** `String.prototype.isWellFormed` (Node 20 has it; the ES2022 lib the compiler targets does not declare it). */
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/**
 * What makes a parsed JSON value unacceptable to store: nesting deeper than the limit
 * (recursive validation and mapping would overflow the stack), a NUL character
 * (PostgreSQL text cannot hold one) or a lone UTF-16 surrogate (JSON's `\ud800` escape:
 * not text; validators throw on it, and PostgreSQL refuses it in jsonb and would get
 * U+FFFD in its place in text).
 */
export type BodyProblem = 'too_deep' | 'nul_character' | 'lone_surrogate';

/** A request body's problems: those, and a key that names JavaScript's object machinery. */
export type RequestBodyProblem = BodyProblem | 'reserved_key';

/** The `default` of a `switch` over every problem: the compiler proves no case is missed. */
export function unknownBodyProblem(problem: never): never {
  throw new Error(`unknown body problem: ${String(problem)}`);
}

/** What a walk found first (null: nothing), and the path of where it was found. */
export interface Finding<T> {
  found: T | null;
  /** `email`, `message.parts[0].text`; '' for the value itself. */
  path: string;
}

/** A place in the walk: its path is built only for the place where something is found. */
interface Place {
  node: unknown;
  depth: number;
  /** The member's key, or the element's index; undefined for the value itself. */
  key: string | number | undefined;
  parent: Place | undefined;
}

/**
 * What `test` finds first in a parsed JSON value (or a decoded protobuf message, whose
 * bytes are leaves), in document order, with the path of
 * where. `test` sees every value with its depth (the value itself is 1) and, for an
 * object's member, its key; what it finds ends the walk, so a value found too deep is
 * never descended into. Walked iteratively, so no nesting can overflow the stack.
 */
export function firstPath<T>(
  value: unknown,
  test: (node: unknown, depth: number, key: string | undefined) => T | null,
): Finding<T> {
  const stack: Place[] = [{ node: value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const place = stack.pop()!;
    const { node } = place;
    const found = test(node, place.depth, typeof place.key === 'string' ? place.key : undefined);
    if (found !== null) {
      return { found, path: pathOf(place) };
    }
    // Bytes (a decoded protobuf message's) are data, not nesting.
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) {
      continue;
    }
    const depth = place.depth + 1;
    // Pushed last to first, so that the first is walked first.
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) {
        stack.push({ node: node[i], depth, key: i, parent: place });
      }
    } else {
      // Object.entries, not `node[key]`: a JSON `__proto__` member is an own property that indexing would miss.
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ node: entries[i][1], depth, key: entries[i][0], parent: place });
      }
    }
  }
  return { found: null, path: '' };
}

/** A place's path. A key that is not text cannot be named: the path ends at the object that holds it. */
function pathOf(place: Place): string {
  const keys: Array<string | number> = [];
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) {
    if (typeof at.key === 'string' && textProblem(at.key)) {
      keys.length = 0;
    } else {
      keys.push(at.key);
    }
  }
  let path = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    path += typeof key === 'number' ? `[${key}]` : path ? `.${key}` : key;
  }
  return path;
}

/** A string's problem, if any: a NUL character, or a lone surrogate (a UTF-16 surrogate without its pair). */
const textProblem = (text: string): BodyProblem | null =>
  text.includes('\u0000') ? 'nul_character' : isWellFormed.call(text) ? null : 'lone_surrogate';

const valueProblem = (node: unknown, depth: number, limit: number): BodyProblem | null =>
  typeof node === 'string'
    ? textProblem(node)
    : node !== null && typeof node === 'object' && depth > limit && !ArrayBuffer.isView(node)
      ? 'too_deep'
      : null;

/** The first problem of a parsed value, in any string or key, with its path; `limit` is the depth allowed. */
export function bodyProblem(value: unknown, limit: number): Finding<BodyProblem> {
  return firstPath(value, (node, depth, key) =>
    key === undefined ? valueProblem(node, depth, limit) : (textProblem(key) ?? valueProblem(node, depth, limit)),
  );
}

/** Keys that name JavaScript's object machinery, not data: Nest strips them silently wherever they are. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A request body's first problem, in one walk: those of `bodyProblem` (to the depth
 * of MAX_JSON_DEPTH), and a `__proto__`, `constructor` or `prototype` key anywhere
 * (its path names it: `peer.__proto__`). No field of this API has such a name, and
 * letting one through would either lose it silently (the validation pipe deletes
 * them) or hand a prototype-pollution vector to whatever merges the object later.
 */
export function requestBodyProblem(value: unknown): Finding<RequestBodyProblem> {
  return firstPath(value, (node, depth, key): RequestBodyProblem | null =>
    key === undefined
      ? valueProblem(node, depth, MAX_JSON_DEPTH)
      : RESERVED_KEYS.has(key)
        ? 'reserved_key'
        : (textProblem(key) ?? valueProblem(node, depth, MAX_JSON_DEPTH)),
  );
}
