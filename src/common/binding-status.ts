/**
 * The one table that turns the protocol checks' HTTP statuses (CONTRACT §5, §10)
 * into `google.rpc.Code`: the gRPC binding's status codes, and the `status` names of
 * the HTTP+JSON binding's `google.rpc.Status` error member. README "Protocol
 * bindings" lists it.
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
