import { randomUUID } from 'node:crypto';
import { parseSseStream } from '@a2a-js/sdk';
import type { TestApp } from './app';
import {
  apiKey,
  insertIdentity,
  mintAgentKey,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
  type IdentityOptions,
} from './fixtures';

/** An identity with its agent key. */
export interface Agent extends IdentityFixture {
  key: string;
}

/** A claimed, enabled identity of the account's organization, with an agent key. */
export async function enabledAgent(
  t: TestApp,
  account: ConsoleAccount,
  settings: Omit<IdentityOptions, 'organizationId'> = {},
): Promise<Agent> {
  const identity = await insertIdentity(t, { organizationId: account.organizationId, enabled: true, ...settings });
  return { ...identity, key: await mintAgentKey(t, account, identity.id) };
}

/** One organization with a requester and a worker, both enabled. */
export async function agentPair(t: TestApp, account?: ConsoleAccount) {
  const acme = account ?? (await signup(t));
  return { acme, requester: await enabledAgent(t, acme), worker: await enabledAgent(t, acme) };
}

export type A2AVersion = '0.3' | '1.0';

let rpcIds = 0;

/** A JSON-RPC call to `POST /a2a/{handle}`; no A2A-Version header for 0.3 unless `explicit`. */
export function rpc(
  t: TestApp,
  handle: string,
  key: string,
  method: string,
  params: unknown,
  version: A2AVersion = '0.3',
) {
  const req = t.http().post(`/a2a/${handle}`).set(apiKey(key));
  if (version === '1.0') {
    req.set('A2A-Version', '1.0');
  }
  return req.send({ jsonrpc: '2.0', id: ++rpcIds, method, params });
}

/** A v0.3 user message. */
export function v03Message(text: string, extra: Record<string, unknown> = {}) {
  return { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...extra };
}

/** A v1.0 user message. */
export function v1Message(text: string, extra: Record<string, unknown> = {}) {
  return { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }], ...extra };
}

/** Sends a non-blocking v0.3 message and returns the new task. */
export async function submitTask(
  t: TestApp,
  requester: Agent,
  worker: Agent,
  text = 'please do the thing',
): Promise<{ id: string; contextId: string }> {
  const res = await rpc(t, worker.handle, requester.key, 'message/send', {
    message: v03Message(text),
    configuration: { blocking: false },
  }).expect(200);
  if (!res.body.result) {
    throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  }
  return res.body.result;
}

/** The worker's REST reply. */
export function reply(t: TestApp, taskId: string, key: string, body: unknown) {
  return t
    .http()
    .post(`/api/v1/tasks/${taskId}/reply`)
    .set(apiKey(key))
    .send(body as object);
}

/**
 * Opens an SSE stream (a streaming JSON-RPC call) with fetch and reads its events,
 * JSON-parsed, as they arrive. Comments (keep-alives) are counted, not yielded.
 */
export async function openStream(
  baseUrl: string,
  handle: string,
  key: string,
  method: string,
  params: unknown,
  version: A2AVersion = '0.3',
) {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/a2a/${handle}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-api-key': key,
      ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcIds, method, params }),
    signal: abort.signal,
  });
  return sseOf(response, abort);
}

/**
 * A stream of the HTTP+JSON binding (`POST` with `body`, or `GET`) at `{base}/a2a/{handle}/rest{path}`,
 * read as `openStream` reads JSON-RPC ones (its events are the binding's StreamResponse JSON).
 */
export async function openRestStream(
  baseUrl: string,
  handle: string,
  key: string,
  path: string,
  body?: unknown,
  version: A2AVersion = '1.0',
) {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/a2a/${handle}/rest${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-api-key': key,
      ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: abort.signal,
  });
  return sseOf(response, abort);
}

function sseOf(response: Response, abort: AbortController) {
  const events = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? parseSseStream(response)
    : null;
  return {
    response,
    /** The next event's JSON-RPC envelope, or null at the end of the stream. */
    async next(timeoutMs = 10_000): Promise<{ type: string; body: any } | null> {
      if (!events) {
        throw new Error(`not a stream: ${response.status} ${await response.text()}`);
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error('no event in time')), timeoutMs)),
      );
      try {
        const next = await Promise.race([events.next(), timeout]);
        return next.done ? null : { type: next.value.type, body: JSON.parse(next.value.data) };
      } finally {
        clearTimeout(timer);
      }
    },
    /** Reads until the stream ends; returns the remaining envelopes. */
    async rest(timeoutMs = 10_000): Promise<any[]> {
      const all: any[] = [];
      for (let event = await this.next(timeoutMs); event; event = await this.next(timeoutMs)) {
        all.push(event.body);
      }
      return all;
    },
    close: () => abort.abort(),
  };
}

/**
 * Starts a call that creates a task and then waits (a blocking send), and returns the
 * id of the task it created — found through the worker's REST list — with the
 * pending response.
 */
export async function startBlocking<T>(
  t: TestApp,
  worker: Agent,
  call: () => PromiseLike<T>,
): Promise<{ taskId: string; response: Promise<T> }> {
  const ids = async () =>
    (
      (await t.http().get('/api/v1/tasks?role=worker&limit=200').set(apiKey(worker.key)).expect(200)).body
        .tasks as Array<{ id: string }>
    ).map((task) => task.id);
  const before = new Set(await ids());
  const response = Promise.resolve(call());
  for (let i = 0; i < 500; i++) {
    const fresh = (await ids()).find((id) => !before.has(id));
    if (fresh) {
      return { taskId: fresh, response };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the call created no task');
}
