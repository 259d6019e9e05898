import * as grpc from '@grpc/grpc-js';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { ERROR_INFO_TYPE_URL, grpcStatusDetails } from '../common/binding-status';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import {
  CUT_MARKER,
  cutBelow,
  MAX_STATUS_MESSAGE_BYTES,
  readableService,
  RefusedRequest,
  withinBounds,
} from './grpc-messages';

describe('cutBelow', () => {
  it('replaces the objects and arrays deeper than the limit, and keeps every other value as it is', () => {
    const bytes = new Uint8Array([1, 2]);
    const when = new Date(0);
    const value = { a: [{ b: { c: 1 } }, 'text'], bytes, when };
    expect(cutBelow(value, 3)).toEqual({ a: [{ b: CUT_MARKER }, 'text'], bytes, when });
    expect((cutBelow(value, 3) as { bytes: unknown }).bytes).toBe(bytes);
    expect(cutBelow(value, 4)).toEqual(value);
    expect(value.a[0]).toEqual({ b: { c: 1 } });
  });

  it('copies a value nested far deeper than the stack allows', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) {
      deep = i % 2 ? [deep] : { a: deep };
    }
    expect(JSON.stringify(cutBelow(deep, 2))).toBe(`[{"a":"${CUT_MARKER}"}]`);
  });
});

describe('withinBounds: a gRPC status message fits the trailers', () => {
  const status = (details: string, metadata = new grpc.Metadata()) => ({
    code: grpc.status.INVALID_ARGUMENT,
    details,
    metadata,
  });

  it('leaves a message within the limit as it is', () => {
    for (const details of ['', 'é'.repeat(MAX_STATUS_MESSAGE_BYTES / 2), 'y'.repeat(MAX_STATUS_MESSAGE_BYTES)]) {
      const short = status(details);
      expect(withinBounds(short)).toBe(short);
    }
  });

  it('cuts a longer one between characters, with an ellipsis, to at most the limit in UTF-8', () => {
    for (const character of ['y', 'é', '€', '😀']) {
      const { details } = withinBounds(status(character.repeat(MAX_STATUS_MESSAGE_BYTES + 1)));
      expect(Buffer.byteLength(details)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
      expect(Buffer.byteLength(details)).toBeGreaterThan(MAX_STATUS_MESSAGE_BYTES - 3 - 4);
      expect(details).toMatch(new RegExp(`^(?:${character})+…$`, 'u'));
    }
  });

  it('cuts the message of its status details too, keeping their ErrorInfo', () => {
    const metadata = new grpc.Metadata();
    const info = { reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { id: 'x' } };
    metadata.set(GRPC_STATUS_DETAILS_BIN, grpcStatusDetails(grpc.status.NOT_FOUND, 'y'.repeat(5000), info));
    const cut = withinBounds(status('y'.repeat(5000), metadata));
    const details = decodeStatus(Buffer.from(cut.metadata!.get(GRPC_STATUS_DETAILS_BIN)[0]));
    expect(details.message).toBe(cut.details);
    expect(details.details.map((detail) => detail.typeUrl)).toEqual([ERROR_INFO_TYPE_URL]);
    expect(decodeErrorInfo(details.details[0].value)).toMatchObject(info);
    // The status handed in is not changed.
    expect(metadata.get(GRPC_STATUS_DETAILS_BIN)[0].length).toBeGreaterThan(5000);
  });
});

describe('readableService: a request that is not whole fields is refused', () => {
  // An lf.a2a.v1 SendMessageRequest (tenant "agent-e2605aec", a message with one data part)
  // cut five bytes short: its second field runs past the frame's end.
  const truncated = Buffer.from(
    '0a0e6167656e742d653236303561656312410a2434306462343564652d393664362d346233372d613866632d3764313639383132663733612001' +
      '2a1722152a130a110a0161120c2a0a0a080a016112031a01',
    'hex',
  );
  const sendMessage = (definition: grpc.ServiceDefinition) =>
    definition.sendMessage.requestDeserialize as (bytes: Buffer) => unknown;

  it("refuses a truncated frame that a2a.v1's own decoder reads as a message (malformed_protobuf)", () => {
    // The SDK's decoder realigns on the tenant's bytes read as a message, and does not throw.
    expect(() => sendMessage(LegacyA2AService)(truncated)).not.toThrow();
    const read = sendMessage(readableService(LegacyA2AService))(truncated);
    expect(read).toBeInstanceOf(RefusedRequest);
    expect((read as RefusedRequest).refusal.code).toBe('malformed_protobuf');
  });

  it('reads a whole frame as the SDK does', () => {
    const request = {
      request: {
        messageId: 'm1',
        contextId: 'c1',
        taskId: '',
        role: 1,
        content: [],
        metadata: undefined,
        extensions: [],
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        pushNotification: undefined,
        historyLength: 0,
        blocking: true,
      },
      metadata: undefined,
    };
    const whole = LegacyA2AService.sendMessage.requestSerialize(request);
    const read = sendMessage(readableService(LegacyA2AService))(whole);
    expect(read).toEqual(sendMessage(LegacyA2AService)(whole));
    expect(read).toMatchObject({ request: { messageId: 'm1', contextId: 'c1' }, configuration: { blocking: true } });
  });
});
