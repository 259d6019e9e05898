import * as grpc from '@grpc/grpc-js';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { AppError, badRequest } from '../common/app-error';
import { ERROR_INFO_TYPE_URL, grpcStatusDetails } from '../common/binding-status';
import { bodyProblem, MAX_JSON_DEPTH, unknownBodyProblem } from '../common/body-problem';

/**
 * A request message the gRPC binding refuses before any check, as the HTTP bindings'
 * body parser refuses a body: what a method's handler receives in its place.
 */
export class RefusedRequest {
  constructor(readonly refusal: AppError) {}
}

/**
 * A gRPC service definition whose messages can always be read and written:
 *
 * - A request that is not a valid protobuf message of its method (garbage, truncated),
 *   that nests deeper than the HTTP bindings' limit, or that holds a NUL character
 *   becomes a RefusedRequest, which the binding answers as INVALID_ARGUMENT with its
 *   request log line. Left to grpc-js, a decoding error is answered INTERNAL before any
 *   handler runs, and logged nowhere. The limits are the HTTP bindings' own check
 *   (`bodyProblem`) on the decoded message: the depth of `message.parts[i].data` is
 *   counted as on JSON-RPC (`params.message.parts[i].data`).
 * - A response that nests too deep for the SDK's encoder, whose recursion would overflow
 *   the stack (grpc-js would answer INTERNAL, for every read of that task), is written
 *   with what lies deeper than that limit replaced by a marker string. The limit at the
 *   input keeps such data out; this covers data stored before it or by another way in.
 *   It costs nothing until an encoding fails.
 */
export function readableService(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      {
        ...method,
        requestDeserialize: guardedDecode(method.requestDeserialize),
        responseSerialize: guardedEncode(method.responseSerialize),
      },
    ]),
  );
}

function guardedDecode(decode: (bytes: Buffer) => unknown): (bytes: Buffer) => unknown {
  return (bytes) => {
    let request: unknown;
    try {
      readFields(bytes);
      request = decode(bytes);
    } catch (error) {
      // Each nested message is a recursive call of the decoder: deep enough, it overflows before the depth check below sees it.
      return new RefusedRequest(isStackOverflow(error) ? tooDeep() : malformed());
    }
    const problem = bodyProblem(request, MAX_JSON_DEPTH).found;
    switch (problem) {
      case 'too_deep':
        return new RefusedRequest(tooDeep());
      case 'nul_character':
        return new RefusedRequest(
          badRequest(
            'nul_character',
            'The request message contains a NUL character (\\u0000), which no field accepts.',
          ),
        );
      case 'lone_surrogate':
        // Unreachable from the wire (decoded UTF-8 has no lone surrogate), refused all the same.
        return new RefusedRequest(
          badRequest(
            'validation_failed',
            'The request message contains a lone UTF-16 surrogate, which no field accepts.',
          ),
        );
      case null:
        return request;
      default:
        return unknownBodyProblem(problem);
    }
  };
}

function guardedEncode(encode: (value: unknown) => Buffer): (value: unknown) => Buffer {
  return (value) => {
    try {
      return encode(value);
    } catch (error) {
      if (!isStackOverflow(error)) {
        throw error;
      }
      return encode(cutBelow(value, MAX_JSON_DEPTH));
    }
  };
}

/**
 * Reads the request's top-level fields with @bufbuild/protobuf's reader, which checks each
 * against the frame's end; throws for a frame that is not a sequence of whole fields. The
 * SDK's decoders do not check that a nested message ends within its field: a truncated
 * frame whose first field they read as a message could realign and decode as another one
 * (an `lf.a2a.v1` request cut short, sent to `a2a.v1`, one time in nine by its tenant's bytes).
 */
function readFields(bytes: Uint8Array): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    reader.skip(wireType, fieldNo);
  }
}

const malformed = () =>
  badRequest('malformed_protobuf', "The request is not a valid protobuf message of this method's request type.");
const tooDeep = () => badRequest('body_too_deep', `The request message nests deeper than ${MAX_JSON_DEPTH} levels.`);

/**
 * By name, not `instanceof`: the overflow may surface in a built-in of another realm
 * (Buffer or TextEncoder inside a test runner's VM context), whose RangeError is not ours.
 */
function isStackOverflow(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  return name === 'RangeError' && typeof message === 'string' && /call stack/i.test(message);
}

/** What a response shows where its data nested deeper than `cutBelow`'s limit. */
export const CUT_MARKER = `[nested deeper than ${MAX_JSON_DEPTH} levels]`;

/**
 * A copy of `value` whose plain objects and arrays nested deeper than `limit` are
 * replaced by CUT_MARKER; other values (strings, bytes, dates) are kept as they are.
 * Iterative, so it cannot overflow however deep the value.
 */
export function cutBelow(value: unknown, limit: number): unknown {
  const root: { value?: unknown } = {};
  const stack: Array<[source: unknown, target: Record<string, unknown>, key: string, depth: number]> = [
    [value, root, 'value', 1],
  ];
  while (stack.length > 0) {
    const [source, target, key, depth] = stack.pop()!;
    if (!isContainer(source)) {
      target[key] = source;
      continue;
    }
    if (depth > limit) {
      target[key] = CUT_MARKER;
      continue;
    }
    const copy: Record<string, unknown> = Array.isArray(source) ? ([] as unknown as Record<string, unknown>) : {};
    target[key] = copy;
    for (const [childKey, child] of Object.entries(source)) {
      stack.push([child, copy, childKey, depth + 1]);
    }
  }
  return root.value;
}

function isContainer(value: unknown): value is object {
  if (value === null || typeof value !== 'object') {
    return false;
  }
  if (Array.isArray(value)) {
    return true;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** The most a status message may hold, in UTF-8 bytes: well inside a client's metadata limit (8 KiB by default) once percent-encoded. */
export const MAX_STATUS_MESSAGE_BYTES = 1024;

/**
 * Every status the server sends, its message cut to MAX_STATUS_MESSAGE_BYTES (and the
 * one in its `grpc-status-details-bin` with it). Some of the SDK's messages quote the
 * request (the v0.3 services' `Invalid or missing task ID in: "<name>"`); a status that
 * does not fit in the HTTP/2 trailers is never delivered, and the call hangs with its
 * connection. Costs a length check unless a message is that long.
 */
export const boundedStatus: grpc.ServerInterceptor = (_method, call) =>
  new grpc.ServerInterceptingCall(call, { sendStatus: (status, next) => next(withinBounds(status)) });

/** What a server interceptor's `sendStatus` is given (grpc-js does not export its name). */
type StatusSent = Parameters<NonNullable<grpc.Responder['sendStatus']>>[0];

/** A status as boundedStatus sends it: the same status unless its message is too long. */
export function withinBounds(status: StatusSent): StatusSent {
  const details = status.details ?? '';
  if (details.length * 3 <= MAX_STATUS_MESSAGE_BYTES || Buffer.byteLength(details) <= MAX_STATUS_MESSAGE_BYTES) {
    return status;
  }
  let cut = '';
  let bytes = 0;
  for (const character of details) {
    bytes += Buffer.byteLength(character);
    if (bytes > MAX_STATUS_MESSAGE_BYTES - 3) {
      break;
    }
    cut += character;
  }
  cut += '…';
  const metadata = status.metadata?.clone();
  const encoded = metadata?.get(GRPC_STATUS_DETAILS_BIN)[0];
  if (metadata && encoded !== undefined) {
    metadata.remove(GRPC_STATUS_DETAILS_BIN);
    const info = decodeStatus(Buffer.from(encoded)).details.find((detail) => detail.typeUrl === ERROR_INFO_TYPE_URL);
    if (info) {
      metadata.set(GRPC_STATUS_DETAILS_BIN, grpcStatusDetails(status.code, cut, decodeErrorInfo(info.value)));
    }
  }
  return { ...status, details: cut, metadata };
}
