import { Role, type Message, type Part, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { fromA2AMessage, fromA2APushConfig } from './a2a-mapping';

/**
 * The request handler's own checks: every binding (JSON-RPC, HTTP+JSON, gRPC) hands it
 * decoded SDK objects, and not every decoder checks types, so a value of the wrong type
 * must be a RequestMalformedError (-32602) naming the member, not a TypeError.
 */
describe('fromA2AMessage / fromA2APushConfig type checks', () => {
  const message = (overrides: Partial<Record<keyof Message, unknown>>): Message =>
    ({
      messageId: 'm-1',
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
      parts: [{ content: { $case: 'text', value: 'hi' }, metadata: undefined, filename: '', mediaType: '' }],
      ...overrides,
    }) as Message;
  const part = (content: unknown) => ({ content, metadata: undefined, filename: '', mediaType: '' }) as unknown as Part;
  const refusal = (work: () => unknown) => {
    try {
      work();
    } catch (error) {
      expect(error).toBeInstanceOf(RequestMalformedError);
      return (error as Error).message;
    }
    throw new Error('not refused');
  };

  it("part contents are checked by the ledger's parsePart", () => {
    expect(refusal(() => fromA2AMessage(message({ parts: [part({ $case: 'text', value: 5 })] })))).toContain(
      'message.parts[0] text must be a string',
    );
    expect(refusal(() => fromA2AMessage(message({ parts: [null] })))).toContain('message.parts[0]');
    expect(refusal(() => fromA2AMessage(message({ parts: [part({ $case: 'url', value: 'not a url' })] })))).toContain(
      'message.parts[0] url',
    );
    expect(
      fromA2AMessage(
        message({ parts: [part({ $case: 'raw', value: Buffer.from('hi') }), part({ $case: 'data', value: [1] })] }),
      ).parts,
    ).toEqual([{ raw: 'aGk=' }, { data: [1] }]);
  });

  it('lists and ids of the wrong type name their member', () => {
    expect(refusal(() => fromA2AMessage(message({ referenceTaskIds: 5 })))).toContain('message.referenceTaskIds');
    expect(refusal(() => fromA2AMessage(message({ extensions: [1] })))).toContain('message.extensions');
    expect(refusal(() => fromA2AMessage(message({ messageId: 7 })))).toContain('message.messageId');
    expect(refusal(() => fromA2AMessage(message({ taskId: 7 })))).toContain('message.taskId');
    expect(refusal(() => fromA2AMessage(message({ metadata: [] })))).toContain('message.metadata');
  });

  it('push configs', () => {
    const config = (overrides: Record<string, unknown>) =>
      ({
        tenant: '',
        id: '',
        taskId: 't',
        url: 'https://example.test/hook',
        token: '',
        ...overrides,
      }) as TaskPushNotificationConfig;
    expect(refusal(() => fromA2APushConfig(config({ url: 5 })))).toContain('url');
    expect(refusal(() => fromA2APushConfig(config({ token: 5 })))).toContain('token');
    expect(refusal(() => fromA2APushConfig(config({ authentication: { scheme: ['Bearer'] } })))).toContain(
      'authentication',
    );
    expect(
      fromA2APushConfig(config({ authentication: { scheme: 'Bearer', credentials: 'c' } })).authentication,
    ).toEqual({ scheme: 'Bearer', credentials: 'c' });
  });
});
