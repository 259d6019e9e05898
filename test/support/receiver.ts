import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from './app';

/** The body of every webhook request (docs/api.md §8). */
export interface Envelope {
  id: string;
  type: string;
  created_at: string;
  organization_id: string;
  data: Record<string, any>;
}

export interface ReceivedRequest {
  /** The request's path, e.g. `/hook/acme`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered with; 0 for a request it never answered. */
  status: number;
}

/** How to answer a request: a status, or `hang` (never answer). `nth` counts requests for the same webhook-id from 0. */
export type Responder = (request: {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  nth: number;
}) => number | 'hang';

export interface Receiver {
  /** http://127.0.0.1:<port>/hook */
  url: string;
  received: ReceivedRequest[];
  respond: Responder;
  /** Wait this long before answering (a slow endpoint). */
  delayMs: number;
  /** Requests answered 2xx. */
  accepted: () => ReceivedRequest[];
  /** Waits until `predicate` holds for what has been received; fails with what did arrive after `timeoutMs`. */
  waitFor: (predicate: (received: ReceivedRequest[]) => boolean, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  close: () => Promise<void>;
}

/** A real webhook endpoint on loopback, recording every request (tests only). */
export async function startReceiver(respond: Responder = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const seen = new Map<string, number>();
  const receiver: Receiver = {
    url: '',
    received,
    respond,
    delayMs: 0,
    accepted: () => received.filter((r) => r.status >= 200 && r.status < 300),
    waitFor: async (predicate, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) {
          const summary = received
            .map((r) => `${r.status} ${r.headers['webhook-id']} ${r.body.slice(0, 120)}`)
            .join('\n');
          throw new Error(
            `the receiver did not get what was expected within ${timeoutMs} ms; it got ${received.length} request(s):\n${summary}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const nth = seen.get(id) ?? 0;
      seen.set(id, nth + 1);
      const answer = receiver.respond({ path: req.url ?? '', headers: req.headers, body, nth });
      received.push({ path: req.url ?? '', headers: req.headers, body, status: answer === 'hang' ? 0 : answer });
      if (answer === 'hang') {
        return;
      }
      setTimeout(() => res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok'), receiver.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  return receiver;
}

/** Verifies a request's signature with the standardwebhooks package, as a receiver would; returns the envelope. */
export function verified(secret: string, request: ReceivedRequest): Envelope {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Envelope;
}

export interface Subscription {
  id: string;
  secret: string;
  /** The requests that reached this webhook's path. */
  requests: () => ReceivedRequest[];
  /**
   * Waits for `count` events at this webhook and returns them verified, in the order
   * they were emitted (deliveries may arrive in any order; event ids sort by creation
   * time, except between events of one transaction).
   */
  take: (count: number) => Promise<Envelope[]>;
}

/** A webhook on a path of its own at `receiver`, created with `headers` (a Console session or an API key). */
export async function subscribe(
  t: TestApp,
  receiver: Receiver,
  headers: Record<string, string>,
  body: { events: string[]; identity?: string },
): Promise<Subscription> {
  const path = `/hook/${Math.random().toString(36).slice(2)}`;
  const res = await t
    .http()
    .post('/api/v1/webhooks')
    .set(headers)
    .send({ url: new URL(path, receiver.url).href, ...body })
    .expect(201);
  const secret: string = res.body.secret;
  const mine = (received: ReceivedRequest[]) => received.filter((r) => r.path === path);
  return {
    id: res.body.id,
    secret,
    requests: () => mine(receiver.received),
    take: async (count) => {
      const received = mine(await receiver.waitFor((all) => mine(all).length >= count));
      return received.map((r) => verified(secret, r)).sort((a, b) => a.id.localeCompare(b.id));
    },
  };
}
