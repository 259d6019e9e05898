import * as grpc from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';
import type { TestApp } from './app';

const A2AClient = grpc.makeGenericClientConstructor(A2AService as unknown as grpc.ServiceDefinition, 'A2AService');

export interface GrpcOutcome {
  /** The gRPC status code (0: OK). */
  code: number;
  details: string;
  /** The `a2a-reason` trailer (docs/api.md §5's reason), when the call was refused by a check. */
  reason: string | null;
  trailers: grpc.Metadata;
  value?: unknown;
}

/** A raw v1.0 `A2AService` client to the app's gRPC port (GRPC_PORT=0 in the test's startApp). */
export function grpcClient(t: TestApp): grpc.Client {
  const port = t.app.get(GrpcBindingService).port;
  if (!port) {
    throw new Error('start the app with GRPC_PORT to speak gRPC');
  }
  return new A2AClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** HTTP-style credential headers (X-API-Key, Authorization) as gRPC metadata. */
export function metadataOf(headers: Record<string, string>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) {
    metadata.set(name.toLowerCase(), value);
  }
  return metadata;
}

/** A call's end as a GrpcOutcome: OK with its value, or the error's status, details, `a2a-reason` and trailers. */
function outcomeOf(error: grpc.ServiceError | null, value?: unknown): GrpcOutcome {
  if (!error) {
    return { code: 0, details: '', reason: null, trailers: new grpc.Metadata(), value };
  }
  const reason = error.metadata?.get('a2a-reason')[0];
  return {
    code: error.code,
    details: error.details,
    reason: reason === undefined ? null : String(reason),
    trailers: error.metadata,
  };
}

/** One unary call of the v1.0 service, as its status, details and trailers. */
export function unary(
  client: grpc.Client,
  method: string,
  request: unknown,
  metadata: grpc.Metadata,
): Promise<GrpcOutcome> {
  return new Promise((resolve) => {
    const call = (
      client as unknown as Record<
        string,
        (r: unknown, m: grpc.Metadata, cb: grpc.requestCallback<unknown>) => grpc.ClientUnaryCall
      >
    )[method];
    call.call(client, request, metadata, (error, value) => resolve(outcomeOf(error, value)));
  });
}

/** A raw call (request bytes as given, response bytes as received): its status, `a2a-reason` and trailers. */
export function rawCall(
  client: grpc.Client,
  path: string,
  request: Buffer,
  metadata: grpc.Metadata,
  stream = false,
  deadlineMs?: number,
): Promise<GrpcOutcome> {
  const raw = (value: Buffer) => value;
  const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
  return new Promise((resolve) => {
    const finish = (error: grpc.ServiceError | null, value?: unknown) => resolve(outcomeOf(error, value));
    if (!stream) {
      client.makeUnaryRequest(path, raw, raw, request, metadata, options, (error, value) => finish(error, value));
      return;
    }
    const events = client.makeServerStreamRequest(path, raw, raw, request, metadata, options);
    events.on('data', () => undefined);
    events.on('error', (error: grpc.ServiceError) => finish(error));
    events.on('end', () => finish(null));
  });
}

/**
 * Protobuf's wire format by hand, for messages the SDK's encoder would not write
 * (nesting deeper than its recursion reaches, truncated or broken frames).
 */
export const wire = {
  varint(value: number): Buffer {
    const bytes: number[] = [];
    for (; value > 127; value = Math.floor(value / 128)) {
      bytes.push((value % 128) | 128);
    }
    bytes.push(value);
    return Buffer.from(bytes);
  },
  /** A length-delimited field (a string, bytes or a sub-message). */
  field(number: number, value: Buffer | string): Buffer {
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    return Buffer.concat([wire.varint((number << 3) | 2), wire.varint(bytes.length), bytes]);
  },
  /** A varint field (an int, a bool or an enum). */
  number(number: number, value: number): Buffer {
    return Buffer.concat([wire.varint(number << 3), wire.varint(value)]);
  },
  /**
   * A `google.protobuf.Value` holding `depth` nested structs `{"a":{"a":…"x"}}` (0: the
   * string alone). Each level's prefix (tags and lengths) is computed from the inside
   * out and the bytes joined once, so a deep value costs no recursion and linear time.
   */
  deepValue(depth: number): Buffer {
    const core = wire.field(3, 'x');
    const prefixes: Buffer[] = [];
    let length = core.length;
    const key = wire.field(1, 'a');
    for (let i = 0; i < depth; i++) {
      const entry = key.length + 1 + wire.varint(length).length + length;
      const struct = 1 + wire.varint(entry).length + entry;
      prefixes.push(
        Buffer.concat([
          Buffer.from([0x2a]),
          wire.varint(struct),
          Buffer.from([0x0a]),
          wire.varint(entry),
          key,
          Buffer.from([0x12]),
          wire.varint(length),
        ]),
      );
      length = 1 + wire.varint(struct).length + struct;
    }
    return Buffer.concat([...prefixes.reverse(), core]);
  },
  /** A `google.protobuf.Struct` `{"a":{"a":…"x"}}`, `depth` objects deep (at least 1). */
  deepStruct(depth: number): Buffer {
    return wire.field(1, Buffer.concat([wire.field(1, 'a'), wire.field(2, wire.deepValue(depth - 1))]));
  },
  /**
   * An `lf.a2a.v1.SendMessageRequest` (v1.0) that returns immediately, with one part:
   * `data` nested `depth` objects deep.
   */
  deepSend(tenant: string, messageId: string, depth: number): Buffer {
    const part = wire.field(4, wire.deepValue(depth));
    const message = Buffer.concat([wire.field(1, messageId), wire.number(4, 1), wire.field(5, part)]);
    return Buffer.concat([wire.field(1, tenant), wire.field(2, message), wire.field(3, wire.number(4, 1))]);
  },
};

/** `{"a":{"a":…"x"}}`, `depth` objects deep (0: `"x"`). */
export function deepJson(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) {
    value = { a: value };
  }
  return value;
}
