/**
 * The one table that turns the protocol checks' HTTP statuses (docs/api.md §5, §10)
 * into `google.rpc.Code`: the gRPC binding's status codes, and the `status` names of
 * the HTTP+JSON binding's `google.rpc.Status` error member. docs/walkthrough.md,
 * "Protocol bindings", lists it.
 */
export const RPC_CODE = {
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAUTHENTICATED: 16,
} as const;

export type RpcStatusName = keyof typeof RPC_CODE;

const BY_HTTP_STATUS: Record<number, RpcStatusName> = {
  400: 'INVALID_ARGUMENT', // malformed request
  401: 'UNAUTHENTICATED', // no key, or an invalid or revoked one
  403: 'PERMISSION_DENIED', // admin key, unclaimed or disabled caller, admission denied
  404: 'NOT_FOUND', // no servable worker (or no such route)
  409: 'ABORTED',
  413: 'RESOURCE_EXHAUSTED', // body over the protocol's limit
  415: 'INVALID_ARGUMENT', // not JSON
  429: 'RESOURCE_EXHAUSTED', // rate limit, open-call slots
};

export function rpcStatusFor(httpStatus: number): RpcStatusName {
  return BY_HTTP_STATUS[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'UNKNOWN');
}

/**
 * The `google.rpc.ErrorInfo` domain of the service's own check refusals (credential,
 * worker, admission, limits) on the HTTP+JSON and gRPC bindings. They are not A2A
 * errors, so they do not claim the A2A domain (`a2a-protocol.org`), whose reasons the
 * SDK clients turn into typed A2A errors.
 */
export const SERVICE_ERROR_DOMAIN = 'a2a-service';

export const ERROR_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.ErrorInfo';

/**
 * A `google.rpc.Status` carrying one `google.rpc.ErrorInfo`, in protobuf's binary form:
 * the value of the `grpc-status-details-bin` trailer (A2A v1.0 §10.6), as the SDK's
 * `encodeGrpcStatusDetails` writes it for A2A errors, here with the service's domain.
 */
export function grpcStatusDetails(
  code: number,
  message: string,
  info: { reason: string; domain: string; metadata: Record<string, string> },
): Buffer {
  const errorInfo = Buffer.concat([
    field(1, Buffer.from(info.reason)),
    field(2, Buffer.from(info.domain)),
    ...Object.entries(info.metadata).map(([key, value]) =>
      field(3, Buffer.concat([field(1, Buffer.from(key)), field(2, Buffer.from(value))])),
    ),
  ]);
  const any = Buffer.concat([field(1, Buffer.from(ERROR_INFO_TYPE_URL)), field(2, errorInfo)]);
  return Buffer.concat([Buffer.from([0x08]), varint(code), field(2, Buffer.from(message)), field(3, any)]);
}

/** A length-delimited field (wire type 2). */
function field(number: number, bytes: Buffer): Buffer {
  return Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value >>> 0;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest >>>= 7;
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}
