import { startApp, type TestApp } from '../support/app';
import { agentPair, openRestStream, openStream, reply, rpc, v03Message, v1Message, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';

/**
 * A2A v1.0 §5.6.1: every timestamp the protocol returns is ISO 8601 in UTC, with `Z`
 * and no other offset — on JSON-RPC and HTTP+JSON, both generations, in answers and in
 * stream events. (gRPC carries `google.protobuf.Timestamp`, not text.)
 */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** Every string under a key that names a time (`timestamp`, `…Timestamp`, `…At`), with its path. */
function timestamps(value: unknown, path = '$'): Array<[string, unknown]> {
  if (Array.isArray(value)) {
    return value.flatMap((item, i) => timestamps(item, `${path}[${i}]`));
  }
  if (!value || typeof value !== 'object') {
    return [];
  }
  return Object.entries(value).flatMap(([key, child]) => [
    ...(/(^timestamp$|Timestamp$|At$|_at$)/.test(key) ? [[`${path}.${key}`, child] as [string, unknown]] : []),
    ...timestamps(child, `${path}.${key}`),
  ]);
}

describe('protocol timestamps (A2A v1.0 §5.6.1)', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    // A process in another zone must still answer in UTC.
    process.env.TZ = 'America/New_York';
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '50' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  it('every timestamp in answers and stream events is ISO 8601 UTC with Z', async () => {
    const seen: Array<[string, unknown]> = [];
    const v03 = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('hi'),
      configuration: { blocking: false },
    }).expect(200);
    const v03Id = v03.body.result.id as string;
    const v1 = await rpc(
      t,
      worker.handle,
      requester.key,
      'SendMessage',
      { message: v1Message('hi'), configuration: { returnImmediately: true } },
      '1.0',
    ).expect(200);
    const v1Id = v1.body.result.task.id as string;
    seen.push(...timestamps(v03.body), ...timestamps(v1.body));

    const streams = [
      await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: v03Id }),
      await openStream(t.baseUrl, worker.handle, requester.key, 'SubscribeToTask', { id: v1Id }, '1.0'),
      await openRestStream(t.baseUrl, worker.handle, requester.key, `/tasks/${v1Id}:subscribe`),
    ];
    for (const stream of streams) {
      await stream.next();
    }
    for (const id of [v03Id, v1Id]) {
      await reply(t, id, worker.key, {
        state: 'working',
        message: { parts: [{ kind: 'text', text: 'on it' }] },
      }).expect(200);
      await reply(t, id, worker.key, {
        state: 'completed',
        artifacts: [{ parts: [{ kind: 'text', text: 'done' }] }],
      }).expect(200);
    }
    for (const stream of streams) {
      seen.push(...timestamps(await stream.rest()));
    }

    seen.push(...timestamps((await rpc(t, worker.handle, requester.key, 'tasks/get', { id: v03Id }).expect(200)).body));
    seen.push(
      ...timestamps((await rpc(t, worker.handle, requester.key, 'GetTask', { id: v1Id }, '1.0').expect(200)).body),
    );
    seen.push(
      ...timestamps(
        (await rpc(t, worker.handle, requester.key, 'ListTasks', { includeArtifacts: true }, '1.0').expect(200)).body,
      ),
    );
    const rest = (path: string) =>
      t
        .http()
        .get(`/a2a/${worker.handle}/rest${path}`)
        .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
        .expect(200);
    seen.push(...timestamps((await rest(`/tasks/${v1Id}`)).body), ...timestamps((await rest('/tasks')).body));
    seen.push(
      ...timestamps(
        (await t.http().get(`/a2a/${worker.handle}/rest/v1/tasks/${v03Id}`).set(apiKey(requester.key)).expect(200))
          .body,
      ),
    );

    expect(seen.length).toBeGreaterThan(15);
    expect(seen.filter(([, value]) => typeof value !== 'string' || !ISO_UTC.test(value))).toEqual([]);
  });
});
