/** One Server-Sent Event of `GET /api/v1/events/stream`. */
export interface StreamedEvent {
  id: string | undefined;
  event: string;
  data: any;
}

/**
 * Opens the event stream with fetch and parses its frames (id, event, data lines;
 * comments are counted as keep-alives). `next` waits for the next event.
 */
export async function openEventStream(
  baseUrl: string,
  headers: Record<string, string>,
  options: { lastEventId?: string; query?: string } = {},
) {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/api/v1/events/stream${options.query ? `?${options.query}` : ''}`, {
    headers: {
      accept: 'text/event-stream',
      ...headers,
      ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}),
    },
    signal: abort.signal,
  });
  const queue: StreamedEvent[] = [];
  const waiting: Array<() => void> = [];
  let ended = false;
  let comments = 0;
  const pump = (async () => {
    if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) {
              comments++;
            } else if (line.startsWith('id: ')) {
              id = line.slice(4);
            } else if (line.startsWith('event: ')) {
              event = line.slice(7);
            } else if (line.startsWith('data: ')) {
              data.push(line.slice(6));
            }
          }
          if (data.length > 0) {
            queue.push({ id, event, data: JSON.parse(data.join('\n')) });
          }
          waiting.splice(0).forEach((wake) => wake());
        }
      }
    } catch {
      // aborted
    } finally {
      ended = true;
      waiting.splice(0).forEach((wake) => wake());
    }
  })();
  return {
    response,
    get keepAlives() {
      return comments;
    },
    /** The next event, or null once the stream has ended. */
    async next(timeoutMs = 10_000): Promise<StreamedEvent | null> {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0 && !ended) {
        if (Date.now() > deadline) {
          throw new Error('no event in time');
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return queue.shift() ?? null;
    },
    /** Reads `count` events. */
    async take(count: number, timeoutMs = 10_000): Promise<StreamedEvent[]> {
      const events: StreamedEvent[] = [];
      while (events.length < count) {
        const event = await this.next(timeoutMs);
        if (!event) {
          throw new Error(`the stream ended after ${events.length} of ${count} events`);
        }
        events.push(event);
      }
      return events;
    },
    /** Events already received and not yet taken. */
    pending: () => queue.length,
    close: async () => {
      abort.abort();
      await pump;
    },
  };
}
