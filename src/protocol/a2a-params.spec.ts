import { JsonRpcTransportHandler, ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import * as legacy from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { isA2AMethod, paramsErrors, requestErrors, V1_REQUESTS } from './a2a-params';

describe('A2A params checks', () => {
  const fields = (errors: Array<{ field: string }>) => errors.map((e) => e.field);

  it('names every offending member, with its path', () => {
    expect(fields(paramsErrors('0.3', 'tasks/get', { id: 5, historyLength: 'x' }))).toEqual([
      'params.id',
      'params.historyLength',
    ]);
    expect(
      fields(
        paramsErrors('0.3', 'message/send', {
          message: {
            messageId: 'm',
            role: 'user',
            parts: [
              { kind: 'text', text: 5 },
              { kind: 'file', file: null },
            ],
            referenceTaskIds: 5,
          },
        }),
      ),
    ).toEqual(['params.message.parts[0]', 'params.message.parts[1]', 'params.message.referenceTaskIds']);
    expect(fields(paramsErrors('1.0', 'SendMessage', { message: { messageId: 'm', parts: [null] } }))).toEqual([
      'params.message.role',
      'params.message.parts[0]',
    ]);
  });

  it('a missing required member, and params that are not an object', () => {
    expect(paramsErrors('0.3', 'tasks/pushNotificationConfig/set', { taskId: 't' })[0].message).toBe(
      'params.pushNotificationConfig is required',
    );
    expect(paramsErrors('1.0', 'GetTask', [])[0].message).toBe('params must be an object');
    expect(paramsErrors('1.0', 'GetTask', undefined)[0].message).toBe('params must be an object');
  });

  it('null is absent; unknown members and unknown methods are left alone', () => {
    expect(paramsErrors('0.3', 'tasks/get', { id: 't', historyLength: null, somethingElse: 5 })).toEqual([]);
    expect(paramsErrors('1.0', 'NoSuchMethod', { id: 5 })).toEqual([]);
    expect(paramsErrors('0.3', 'toString', { id: 5 })).toEqual([]);
  });

  it('v1.0 members may be spelled in snake_case, as the SDK reads them', () => {
    expect(
      fields(
        paramsErrors('1.0', 'SendMessage', { message: { message_id: 5, role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
      ),
    ).toEqual(['params.message.message_id']);
    expect(paramsErrors('1.0', 'ListTasks', { page_size: 10, include_artifacts: true })).toEqual([]);
  });

  it("each generation's own part form", () => {
    expect(
      paramsErrors('0.3', 'message/send', { message: { messageId: 'm', role: 'user', parts: [{ text: 'x' }] } })[0]
        .message,
    ).toContain('must have a kind');
    expect(
      paramsErrors('1.0', 'SendMessage', {
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ kind: 'text', text: 'x' }] },
      })[0].message,
    ).toContain('is a v0.3 part');
  });

  it('by request shape, for the HTTP+JSON binding', () => {
    expect(requestErrors(V1_REQUESTS.CancelTaskRequest, { id: [] }, 'body')).toEqual([
      { field: 'body.id', message: 'body.id must be a string' },
    ]);
  });
});

/**
 * isA2AMethod answers -32601 before the SDK sees the request (so that a request without
 * an id gets it too): it must name exactly the methods the SDK's transports serve. The
 * methods are the SDK's own lists, so a method a new SDK adds fails this test: v1.0's
 * are its A2A service definition's (JSON-RPC names them as gRPC does), v0.3's its
 * exported `LEGACY_METHOD_*` names.
 */
describe('isA2AMethod', () => {
  const unknown = 'tasks/explode';
  const SDK_METHODS = {
    '1.0': Object.values(A2AService).map(({ path }) => path.slice(path.lastIndexOf('/') + 1)),
    '0.3': Object.entries(legacy)
      .filter(([name]) => name.startsWith('LEGACY_METHOD_'))
      .map(([, method]) => method as string),
  };
  const candidates = [...SDK_METHODS['1.0'], ...SDK_METHODS['0.3'], unknown];
  // Every handler method fails: only whether the transport routes the method matters.
  const failing = new Proxy(
    {},
    {
      get: () => () => {
        throw new Error('reached');
      },
    },
  ) as A2ARequestHandler;
  const sdkServes = async (version: '1.0' | '0.3', method: string) => {
    const transport =
      version === '1.0' ? new JsonRpcTransportHandler(failing) : new LegacyJsonRpcTransportHandler(failing);
    const response = await transport.handle({ jsonrpc: '2.0', id: 1, method, params: {} }, new ServerCallContext());
    return (response as { error?: { code: number } }).error?.code !== -32601;
  };

  it('takes the SDK’s lists of methods (if they were empty, this test would prove nothing)', () => {
    expect(SDK_METHODS['1.0']).toEqual(expect.arrayContaining(['SendMessage', 'ListTasks', 'GetExtendedAgentCard']));
    expect(SDK_METHODS['0.3']).toEqual(
      expect.arrayContaining([
        'message/send',
        'tasks/pushNotificationConfig/list',
        'agent/getAuthenticatedExtendedCard',
      ]),
    );
  });

  it.each(['1.0', '0.3'] as const)(
    'v%s: every method of the SDK’s list, and only those, as its transport serves',
    async (version) => {
      for (const method of SDK_METHODS[version]) {
        expect([method, await sdkServes(version, method)]).toEqual([method, true]);
      }
      for (const method of candidates) {
        expect([method, isA2AMethod(version, method)]).toEqual([method, await sdkServes(version, method)]);
      }
      expect(isA2AMethod(version, unknown)).toBe(false);
    },
  );
});
