import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** The body of every webhook request (CONTRACT §8). */
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
export type Responder = (request: { headers: IncomingHttpHeaders; body: string; nth: number }) => number | 'hang';

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
  let server: Server;
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
          const summary = received.map((r) => `${r.status} ${r.headers['webhook-id']} ${r.body.slice(0, 120)}`).join('\n');
          throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms; it got ${received.length} request(s):\n${summary}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const nth = seen.get(id) ?? 0;
      seen.set(id, nth + 1);
      const answer = receiver.respond({ headers: req.headers, body, nth });
      received.push({ path: req.url ?? '', headers: req.headers, body, status: answer === 'hang' ? 0 : answer });
      if (answer === 'hang') return;
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
