import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { Part } from '@a2a-js/sdk';
import type { FieldError } from '../common/app-error';
import { parsePart, toPartView, type StoredPart } from './parts';

const parse = (input: unknown) => {
  const errors: FieldError[] = [];
  const part = parsePart(input, 'parts[0]', errors);
  return { part, errors };
};

/** What the SDK's own v0.3 translation makes of a stored part (through a message it serializes). */
function sdkV03View(part: StoredPart): unknown {
  const serialized = new V03PushNotificationSerializer().serialize({
    payload: {
      $case: 'message',
      value: {
        messageId: 'm',
        contextId: 'c',
        taskId: 't',
        role: 2,
        parts: [Part.fromJSON(part)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    },
  });
  return (JSON.parse(String(serialized.body)) as { parts: unknown[] }).parts[0];
}

describe('parts', () => {
  const stored: StoredPart[] = [
    { text: 'hello' },
    { text: 'with metadata', metadata: { lang: 'en' } },
    { raw: 'aGVsbG8=', mediaType: 'text/plain', filename: 'hello.txt' },
    { url: 'https://example.test/report.pdf', mediaType: 'application/pdf' },
    { data: { answer: 42 } },
    { data: [1, 2, 3] },
    { data: 'a string' },
    { data: false },
  ];

  it.each(stored.map((part) => [JSON.stringify(part), part] as const))(
    "shows %s as the SDK's v0.3 translation does",
    (_, part) => {
      expect(toPartView(part)).toEqual(sdkV03View(part));
    },
  );

  it.each(stored.map((part) => [JSON.stringify(part), part] as const))(
    'reads back its own v0.3 view of %s',
    (_, part) => {
      expect(parse(toPartView(part))).toEqual({ part, errors: [] });
    },
  );

  it.each(stored.map((part) => [JSON.stringify(part), part] as const))(
    'accepts the v1.0 form %s as it is',
    (_, part) => {
      expect(parse(part)).toEqual({ part, errors: [] });
    },
  );

  it.each([
    ['not an object', 'text'],
    ['an array', [{ text: 'x' }]],
    ['no content', { mediaType: 'text/plain' }],
    ['two contents', { text: 'a', data: {} }],
    ['an unknown v1.0 field', { text: 'a', colour: 'red' }],
    ['an unknown kind', { kind: 'video', text: 'x' }],
    ['a v0.3 text part with a v1.0 field', { kind: 'text', text: 'x', mediaType: 'text/plain' }],
    ['text that is not a string', { kind: 'text', text: 5 }],
    ['a file with both bytes and uri', { kind: 'file', file: { bytes: 'aGk=', uri: 'https://example.test' } }],
    ['a file with neither', { kind: 'file', file: { name: 'x' } }],
    ['a file with an unknown field', { kind: 'file', file: { uri: 'https://example.test', size: 3 } }],
    ['bytes that are not base64', { kind: 'file', file: { bytes: '***' } }],
    ['raw that is not base64', { raw: 'a b' }],
    ['a url that is not one', { url: 'not a url' }],
    ['v0.3 data that is not an object', { kind: 'data', data: [1] }],
    ['metadata that is not an object', { text: 'x', metadata: 'm' }],
    ['null data (no content in A2A v1.0 JSON)', { data: null }],
    ['wrapped null data', { kind: 'data', data: { value: null }, metadata: { data_part_compat: true } }],
  ])('refuses %s, naming the field', (_, input) => {
    const { part, errors } = parse(input);
    expect(part).toBeNull();
    expect(errors).toEqual([{ field: 'parts[0]', message: expect.stringMatching(/^parts\[0\] /) }]);
  });
});
