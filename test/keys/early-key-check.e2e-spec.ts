import { request as httpRequest, type IncomingMessage } from 'node:http';
import { KeyUsageTracker } from '../../src/keys/key-usage.tracker';
import { KeysRepository } from '../../src/keys/keys.repository';
import { currentRequestContext } from '../../src/common/request-context';
import { startApp, type TestApp } from '../support/app';
import { agentPair, submitTask, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';

/**
 * A request's API key is read as the request arrives (AuthService.begin, a middleware
 * ahead of the body parser), so that the key's round trip runs while the body is still
 * being read; the guard then takes that read — unless the body took longer than 50 ms,
 * when the guard reads it again. It is still read after the request arrived, so
 * revocation stays immediate (docs/api.md §2).
 */
describe('the API key read as the request arrives', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let lookups: jest.SpyInstance;
  /** The repository's own lookup, for a test that wraps the spy's. */
  let originalFindByHashes: KeysRepository['findByHashes'];

  beforeAll(async () => {
    t = await startApp();
    ({ requester, worker } = await agentPair(t));
    originalFindByHashes = KeysRepository.prototype.findByHashes;
    lookups = jest.spyOn(t.app.get(KeysRepository), 'findByHashes');
  });
  afterAll(() => t.close());
  beforeEach(() => lookups.mockClear());

  /** A POST whose body is sent in two halves, `between` running after the first. */
  function halves(path: string, key: string, body: string, between: () => Promise<void>) {
    return new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(
        `${t.baseUrl}${path}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...apiKey(key) },
        },
        (res: IncomingMessage) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half));
      between().then(
        () => req.end(body.slice(half)),
        (error: unknown) => (req.destroy(), reject(error)),
      );
    });
  }

  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(done()).toBe(true);
  };

  it('is read while the body is still on its way; the request goes on with it', async () => {
    const task = await submitTask(t, requester, worker);
    lookups.mockClear();
    const answer = await halves(
      `/api/v1/tasks/${task.id}/reply`,
      worker.key,
      JSON.stringify({ state: 'completed', message: { parts: [{ kind: 'text', text: 'done' }] } }),
      () => until(() => lookups.mock.calls.length === 1),
    );
    expect(answer).toMatchObject({ status: 200, body: { id: task.id, status: { state: 'completed' } } });
  });

  it('a key revoked before the request arrived is refused, however early it is read', async () => {
    const { requester: doomed, worker: other } = await agentPair(t);
    const task = await submitTask(t, doomed, other);
    await t.http().post('/api-keys/self/revoke').set(apiKey(other.key)).expect(200);
    lookups.mockClear();
    const answer = await halves(`/api/v1/tasks/${task.id}/reply`, other.key, JSON.stringify({ state: 'working' }), () =>
      until(() => lookups.mock.calls.length === 1),
    );
    expect(answer).toMatchObject({ status: 401, body: { code: 'invalid_api_key' } });
  });

  it('a body slower than that has its key read again by its guard: a revocation while it came in is seen', async () => {
    const { requester: slow, worker: doomed } = await agentPair(t);
    const task = await submitTask(t, slow, doomed);
    lookups.mockClear();
    const answer = await halves(
      `/api/v1/tasks/${task.id}/reply`,
      doomed.key,
      JSON.stringify({ state: 'working' }),
      async () => {
        await until(() => lookups.mock.calls.length === 1); // read as it arrived, the key still active
        await t.http().post('/api-keys/self/revoke').set(apiKey(doomed.key)).expect(200);
        await new Promise((resolve) => setTimeout(resolve, 60)); // the body takes longer than an early read stands for
      },
    );
    expect(answer).toMatchObject({ status: 401, body: { code: 'invalid_api_key' } });
    expect(lookups).toHaveBeenCalledTimes(3); // as it arrived, the revocation's own, and again at its guard
  });

  it('a request refused before its guard has its key read, not used; one without a body is left to its guard', async () => {
    const uses = jest.spyOn(t.app.get(KeyUsageTracker), 'touch');
    const refused = await t
      .http()
      .post(`/api/v1/tasks/00000000-0000-4000-8000-000000000001/reply`)
      .set(apiKey(worker.key))
      .set('content-type', 'text/plain')
      .send('state=completed')
      .expect(415);
    expect(refused.body.code).toBe('unsupported_media_type');
    expect(lookups).toHaveBeenCalledTimes(1); // read as it arrived …
    expect(uses).not.toHaveBeenCalled(); // … and not counted as the key's use
    // A card (a route that takes no key) with the key sent anyway: nothing read.
    await t.http().get(`/a2a/${worker.handle}/card`).set(apiKey(worker.key)).expect(200);
    expect(lookups).toHaveBeenCalledTimes(1);
    await t.http().get('/api-keys/self').set(apiKey(worker.key)).expect(200);
    expect([lookups.mock.calls.length, uses.mock.calls.length]).toEqual([2, 1]);
    uses.mockRestore();
  });

  it("is read in its request's log context without the request object; a key its guard reads, with it (the span: test/tracing)", async () => {
    // Measured (BENCHMARKS.md, "Requests kept for a full collection"): the early read's promise, made in a
    // context holding the request and held until the guard takes it, kept each request's objects alive
    // through young-generation collections. Its log lines still carry the request's id (docs/operations.md, "Logs").
    const contexts: Array<{ requestId?: string; request: boolean }> = [];
    lookups.mockImplementation(function (this: KeysRepository, hashes: Buffer[]) {
      const context = currentRequestContext();
      contexts.push({ requestId: context?.requestId, request: context?.request !== undefined });
      return originalFindByHashes.call(this, hashes);
    });
    try {
      const task = await submitTask(t, requester, worker);
      contexts.length = 0;
      await t
        .http()
        .post(`/api/v1/tasks/${task.id}/reply`)
        .set(apiKey(worker.key))
        .set('x-request-id', 'early-read-request')
        .send({ state: 'working' })
        .expect(200);
      await t
        .http()
        .get('/api-keys/self')
        .set(apiKey(worker.key))
        .set('x-request-id', 'guard-read-request')
        .expect(200);
      // (A guard that found the early read stale, the machine being slow, reads it again, with the request.)
      expect([contexts[0], contexts.at(-1)]).toEqual([
        { requestId: 'early-read-request', request: false },
        { requestId: 'guard-read-request', request: true },
      ]);
    } finally {
      lookups.mockImplementation(originalFindByHashes);
    }
  });
});
