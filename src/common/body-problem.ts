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

/** An object or array being walked: its keys (null for an array, whose keys are its indices) and the next member to visit. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  keys: string[] | null;
  next: number;
}

/**
 * What `test` finds first in a parsed JSON value (or a decoded protobuf message, whose
 * bytes are leaves), in document order, with the path of where. `test` sees every value with its depth (the value itself is 1) and, for an
 * object's member, its key; what it finds ends the walk, so a value found too deep is
 * never descended into. Walked iteratively, so no nesting can overflow the stack; the
 * walk holds one frame per object or array on the way down, and builds a path only for
 * what it finds.
 */
export function firstPath<T>(
  value: unknown,
  test: (node: unknown, depth: number, key: string | undefined) => T | null,
): Finding<T> {
  const atRoot = test(value, 1, undefined);
  if (atRoot !== null) {
    return { found: atRoot, path: '' };
  }
  const frames: Frame[] = isNested(value) ? [frameOf(value)] : [];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const { container, keys } = frame;
    if (frame.next === (keys ?? container).length) {
      frames.pop();
      continue;
    }
    const key = keys === null ? undefined : keys[frame.next];
    const node = key === undefined ? (container as unknown[])[frame.next] : (container as Record<string, unknown>)[key];
    frame.next++;
    const found = test(node, frames.length + 1, key);
    if (found !== null) {
      return { found, path: pathOf(frames) };
    }
    if (isNested(node)) {
      frames.push(frameOf(node));
    }
  }
  return { found: null, path: '' };
}

/** Objects and arrays are walked into; bytes (a decoded protobuf message's) are data, not nesting. */
const isNested = (node: unknown): node is object =>
  node !== null && typeof node === 'object' && !ArrayBuffer.isView(node);

// Indexing by Object.keys reads a JSON `__proto__` member too: JSON.parse makes it an own property.
const frameOf = (node: object): Frame =>
  Array.isArray(node)
    ? { container: node, keys: null, next: 0 }
    : { container: node as Record<string, unknown>, keys: Object.keys(node), next: 0 };

/**
 * The path of the member each frame is at, from the top. A key that is not text cannot
 * be named: the path ends at the object that holds it.
 */
function pathOf(frames: Frame[]): string {
  let path = '';
  for (const { keys, next } of frames) {
    const key = keys === null ? next - 1 : keys[next - 1];
    if (typeof key === 'number') {
      path += `[${key}]`;
    } else if (textProblem(key)) {
      break;
    } else {
      path += path ? `.${key}` : key;
    }
  }
  return path;
}

/** A string's problem, if any: a NUL character, or a lone surrogate (a UTF-16 surrogate without its pair). */
const textProblem = (text: string): BodyProblem | null =>
  text.includes('\u0000') ? 'nul_character' : isWellFormed.call(text) ? null : 'lone_surrogate';

const valueProblem = (node: unknown, depth: number, limit: number): BodyProblem | null =>
  typeof node === 'string' ? textProblem(node) : depth > limit && isNested(node) ? 'too_deep' : null;

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
