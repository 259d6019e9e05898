import * as grpc from '@grpc/grpc-js';
import { GRPC_UNREADABLE_RESPONSE } from './upstream-fetch';

/** The A2A v1.0 SendMessage (the v0.3 service, a2a.v1, converts its answer under a try/catch). */
const SEND_MESSAGE = '/lf.a2a.v1.A2AService/SendMessage';

/** In the words of grpc-js's own status for a response it cannot decode, which answeredDespiteError recognizes. */
const UNREADABLE = `${GRPC_UNREADABLE_RESPONSE}: a SendMessageResponse with neither task nor message`;

/**
 * A gRPC client interceptor for the SDK's v1.0 transport: a SendMessageResponse that
 * decodes but carries neither a task nor a message ends the call with INTERNAL, as
 * grpc-js ends one it cannot decode. The transport converts the response inside
 * grpc-js's callback without a try/catch (FromProto.sendMessageResult throws "missing
 * result" there), so such an answer would otherwise be an uncaught exception that ends
 * the process; this way it is a failed call, and the upstream, which answered, is
 * counted as having the message. The other answers of that transport are passed on
 * as decoded (no conversion that could throw), and its streams convert under a try.
 */
export const sendMessageAnswerGuard: grpc.Interceptor = (options, nextCall) => {
  if (options.method_definition.path !== SEND_MESSAGE) {
    return new grpc.InterceptingCall(nextCall(options));
  }
  let unreadable = false;
  return new grpc.InterceptingCall(nextCall(options), {
    start: (metadata, _listener, next) =>
      next(metadata, {
        onReceiveMessage: (message: { payload?: { $case?: string } } | null | undefined, nextMessage) => {
          const answer = message?.payload?.$case;
          if (answer !== 'task' && answer !== 'message') {
            unreadable = true;
          }
          // Passed on even so (grpc-js holds the status until it is): the error status replaces it.
          nextMessage(message);
        },
        onReceiveStatus: (status, nextStatus) =>
          nextStatus(
            unreadable && status.code === grpc.status.OK
              ? { code: grpc.status.INTERNAL, details: UNREADABLE, metadata: new grpc.Metadata() }
              : status,
          ),
      }),
  });
};
