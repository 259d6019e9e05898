import { tolerantFetch } from './upstream-tolerance';

/** A fetch answering `body` in the given chunks, with that status and content type. */
function answering(chunks: string[], type: string, status = 200): typeof fetch {
  return (async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) {
            controller.enqueue(new TextEncoder().encode(chunk));
          }
          controller.close();
        },
      }),
      { status, headers: { 'content-type': type } },
    )) as unknown as typeof fetch;
}

const call = (method: string, signal = new AbortController().signal) => ({
  method: 'POST',
  body: JSON.stringify({ jsonrpc: '2.0', method, params: {}, id: 1 }),
  signal,
});

describe('tolerantFetch', () => {
  it('drops U+001E before SSE lines, also when a line arrives in pieces', async () => {
    const fetch = tolerantFetch(
      answering(['\u001edata: {"a"', ':1}\n\n\u001e', 'data: {"b":2}\n\n'], 'text/event-stream'),
    );
    const res = await fetch('http://upstream.test/a2a', call('SendStreamingMessage'));
    expect(await res.text()).toBe('data: {"a":1}\n\ndata: {"b":2}\n\n');
  });

  it('gives a v0.3 result without kind the kind its shape shows, in JSON and in SSE', async () => {
    const task = { id: 't', contextId: 'c', status: { state: 'completed' } };
    const json = tolerantFetch(
      answering([JSON.stringify({ jsonrpc: '2.0', id: 1, result: task })], 'application/json'),
    );
    expect(await (await json('http://upstream.test/a2a', call('message/send'))).json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { kind: 'task', ...task },
    });
    const events = [
      { messageId: 'm', role: 'agent', parts: [] },
      { taskId: 't', contextId: 'c', status: { state: 'working' } },
      { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [] } },
    ];
    const sse = tolerantFetch(
      answering(
        events.map((result) => `data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result })}\n\n`),
        'text/event-stream',
      ),
    );
    const text = await (await sse('http://upstream.test/a2a', call('message/stream'))).text();
    const kinds = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => (JSON.parse(line.slice(6)) as { result: { kind: string } }).result.kind);
    expect(kinds).toEqual(['message', 'status-update', 'artifact-update']);
  });

  it('leaves v1.0 answers and ambiguous shapes as they are', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { id: 't', status: {}, messageId: 'm' } });
    const v03 = tolerantFetch(answering([body], 'application/json'));
    expect(await (await v03('http://upstream.test/a2a', call('message/send'))).text()).toBe(body);
    const task = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { id: 't', status: {} } });
    const v1 = tolerantFetch(answering([task], 'application/json'));
    expect(await (await v1('http://upstream.test/a2a', call('GetTask'))).text()).toBe(task);
  });
});
