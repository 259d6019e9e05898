import { randomUUID } from 'node:crypto';
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '../../src/common/logger';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';
import { startApp, type TestApp } from '../support/app';
import { agentPair, submitTask, type Agent } from '../support/a2a';
import { apiKey, mintAdminKey } from '../support/fixtures';
import { metadataOf, rawCall, wire, type GrpcOutcome } from '../support/grpc';
import { logEntries } from '../support/log-entries';
import { prng } from '../support/prng';

/**
 * Throws malformed and hostile requests at every RPC of both gRPC services — random
 * bytes, valid messages truncated or with bits flipped, messages the SDK encodes from
 * random values (lone surrogates, NUL, huge strings), data nested deep, fields past the
 * size limit, wrong metadata — and checks that every answer is a status a client can
 * act on, never INTERNAL or UNKNOWN, and that the service stays healthy. The methods
 * come from the services' definitions, so a new RPC is fuzzed without anyone
 * remembering to add it. `FUZZ_SEED` replays a run.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261205);
/** Each RPC's own sequence (the seed and its path), so one RPC's case replays alone (`-t`) as in the whole run. */
let random = prng(SEED);
const seeded = (path: string) =>
  (random = prng([...path].reduce((hash, c) => Math.imul(hash ^ c.charCodeAt(0), 16777619) | 0, SEED)));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
const int = (below: number) => Math.floor(random() * below);
const randomBytes = (length: number) => Buffer.from(Array.from({ length }, () => int(256)));

/** What a client may be answered; INTERNAL and UNKNOWN are the service's own failures. */
const ACCEPTABLE = new Set([
  grpc.status.OK,
  grpc.status.CANCELLED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.PERMISSION_DENIED,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.ABORTED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.UNAUTHENTICATED,
]);

type Definition = Record<string, { path: string; responseStream: boolean; requestSerialize(value: unknown): Buffer }>;

const STRINGS = [
  '',
  ' ',
  'x',
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  '😀'.repeat(20),
  '\u0000',
  'nul\u0000inside',
  '\u202e',
  '../../etc/passwd',
  '%00',
  "' OR 1=1 --",
  'tasks/',
  'tasks/../../x',
  '00000000-0000-4000-8000-000000000000',
  'A'.repeat(5000),
  'y'.repeat(300_000),
];

describe('gRPC fuzzing: both services, every RPC', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let task: { id: string; contextId: string };
  let client: grpc.Client;
  let adminKey: string;
  const logged: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    t = await startApp(
      {
        GRPC_PORT: '0',
        GRPC_HOST: '127.0.0.1',
        EVENTS_DISPATCHER: 'off',
        // Blocking sends and streams end soon: the fuzzer's calls do not wait for a worker.
        PROTOCOL_BLOCKING_TIMEOUT_MS: '100',
        SSE_MAX_DURATION_MS: '1000',
        RATE_LIMIT_PROTOCOL_PER_MINUTE: '1000000',
      },
      undefined,
      createLogger('warn', logEntries(logged)),
    );
    const pair = await agentPair(t);
    ({ requester, worker } = pair);
    adminKey = await mintAdminKey(t, pair.acme);
    task = await submitTask(t, requester, worker);
    client = new grpc.Client(`127.0.0.1:${t.app.get(GrpcBindingService).port}`, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    client?.close();
    await t.close();
  });

  const value = () => pick([...STRINGS, task.id, worker.handle, task.contextId]);

  /** A v1.0 request of each method, from random values, as the SDK encodes it. */
  const v1Requests: Record<string, () => unknown> = {
    sendMessage: () => SendMessageRequest.fromJSON(randomSend()),
    sendStreamingMessage: () => SendMessageRequest.fromJSON(randomSend()),
    getTask: () =>
      GetTaskRequest.fromJSON({ tenant: tenant(), id: value(), historyLength: pick([0, -1, 2 ** 31 - 1]) }),
    listTasks: () =>
      ListTasksRequest.fromJSON({
        tenant: tenant(),
        contextId: value(),
        pageSize: pick([0, -5, 1, 10_000]),
        pageToken: value(),
        status: pick([0, 3, 99, -1]),
        statusTimestampAfter: pick([undefined, '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z']),
      }),
    cancelTask: () => CancelTaskRequest.fromJSON({ tenant: tenant(), id: value() }),
    subscribeToTask: () => SubscribeToTaskRequest.fromJSON({ tenant: tenant(), id: value() }),
    createTaskPushNotificationConfig: () =>
      TaskPushNotificationConfig.fromJSON({
        tenant: tenant(),
        taskId: value(),
        id: value(),
        url: pick(['https://example.com/hook', 'http://127.0.0.1/', 'not a url', ...STRINGS.slice(0, 6)]),
        token: value(),
        authentication: { scheme: value(), credentials: value() },
      }),
    getTaskPushNotificationConfig: () =>
      GetTaskPushNotificationConfigRequest.fromJSON({ tenant: tenant(), taskId: value(), id: value() }),
    listTaskPushNotificationConfigs: () =>
      ListTaskPushNotificationConfigsRequest.fromJSON({
        tenant: tenant(),
        taskId: value(),
        pageSize: pick([0, -1, 5]),
      }),
    getExtendedAgentCard: () => GetExtendedAgentCardRequest.fromJSON({ tenant: tenant() }),
    deleteTaskPushNotificationConfig: () =>
      DeleteTaskPushNotificationConfigRequest.fromJSON({ tenant: tenant(), taskId: value(), id: value() }),
  };

  const tenant = () => (random() < 0.7 ? worker.handle : value());

  function randomSend(): unknown {
    const part = pick([
      () => ({ text: value() }),
      () => ({ data: { k: value(), list: [value(), 1, null, true] } }),
      () => ({ raw: Buffer.from(value()).toString('base64') }),
      () => ({ url: pick(['https://example.com/f', value()]) }),
      () => ({ text: value(), metadata: { [value().slice(0, 50)]: value() } }),
      () => ({}),
    ])();
    return {
      tenant: tenant(),
      message: {
        messageId: random() < 0.8 ? randomUUID() : value(),
        role: pick(['ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED']),
        parts: Array.from({ length: pick([0, 1, 1, 2, 101]) }, () => part),
        ...(random() < 0.3 ? { taskId: value() } : {}),
        ...(random() < 0.3 ? { contextId: value() } : {}),
        ...(random() < 0.2 ? { referenceTaskIds: [value()] } : {}),
      },
      configuration: { returnImmediately: random() < 0.8 },
    };
  }

  /** A v0.3 request by hand (the SDK does not export its v0.3 messages): `name` and a message, random where it counts. */
  function v03Request(method: string): Buffer {
    const name = random() < 0.6 ? `tasks/${pick([task.id, value()])}` : value();
    if (method === 'sendMessage' || method === 'sendStreamingMessage') {
      const part = pick([
        () => wire.field(1, value()),
        () => wire.field(3, wire.field(1, wire.deepStruct(1 + int(3)))),
        () => wire.field(2, wire.field(1, value())),
        () => Buffer.alloc(0),
      ])();
      const message = Buffer.concat([
        wire.field(1, random() < 0.8 ? randomUUID() : value()),
        wire.number(4, pick([0, 1, 2, 7])),
        wire.field(5, part),
      ]);
      return Buffer.concat([wire.field(1, message), wire.field(2, wire.number(3, int(2)))]);
    }
    return Buffer.concat([wire.field(1, name), ...(random() < 0.5 ? [wire.field(2, value())] : [])]);
  }

  /** Metadata: mostly the requester's, sometimes none, another credential, or hostile values. */
  function metadata(): grpc.Metadata {
    const base: Record<string, string> = {};
    const credential = random();
    if (credential < 0.6) {
      base['x-api-key'] = requester.key;
    } else if (credential < 0.7) {
      base['x-api-key'] = adminKey;
    } else if (credential < 0.8) {
      base['x-api-key'] = pick(['a2a_agt_x', 'garbage', 'k'.repeat(4000)]);
    } else if (credential < 0.85) {
      base.authorization = pick(['Bearer nonsense', 'Basic Zm9vOmJhcg==', 'Bearer']);
    }
    if (random() < 0.5) {
      base['a2a-tenant'] = random() < 0.7 ? worker.handle : pick(['x', 'Bad Handle', 'z'.repeat(300)]);
    }
    if (random() < 0.2) {
      base['a2a-version'] = pick(['1.0', '0.3', '99.0', '', 'x', '1.0.0']);
    }
    if (random() < 0.1) {
      base['a2a-extensions'] = pick(['', ',,,', 'https://example.com/ext']);
    }
    if (random() < 0.1) {
      base.traceparent = pick(['00-zz-zz-01', '', '00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-00']);
    }
    return metadataOf(base);
  }

  /** One frame for a method: garbage, a mutation of a valid request, or a valid one. */
  function frame(version: '1.0' | '0.3', method: string, serialize: (value: unknown) => Buffer): [string, Buffer] {
    const valid = () => (version === '1.0' ? serialize(v1Requests[method]()) : v03Request(method));
    switch (int(8)) {
      case 0:
        return ['random bytes', randomBytes(int(64))];
      case 1: {
        const whole = valid();
        return ['truncated', whole.subarray(0, int(Math.max(1, whole.length)))];
      }
      case 2: {
        const flipped = Buffer.from(valid());
        for (let i = 0; i < 1 + int(4) && flipped.length > 0; i++) {
          flipped[int(flipped.length)] ^= 1 << int(8);
        }
        return ['bits flipped', flipped];
      }
      case 3:
        return ['random bytes appended', Buffer.concat([valid(), randomBytes(1 + int(16))])];
      case 4: {
        const depth = pick([65, 500, 3000, 4500, 20_000]);
        const bytes =
          version === '1.0'
            ? wire.deepSend(worker.handle, randomUUID(), depth)
            : wire.field(
                1,
                Buffer.concat([
                  wire.field(1, randomUUID()),
                  wire.number(4, 1),
                  wire.field(5, wire.field(3, wire.field(1, wire.deepStruct(depth)))),
                ]),
              );
        return [`data ${depth} levels deep`, bytes];
      }
      case 5:
        return ['a field past the size limit', Buffer.concat([wire.field(1, 'h'.repeat(1024 * 1024 + int(1000)))])];
      case 6:
        // A string field holding bytes that are not UTF-8 (a lone surrogate's CESU-8 form, a stray continuation byte).
        return [
          'invalid UTF-8',
          Buffer.concat([wire.field(1, Buffer.from([0xed, 0xa0, 0x80])), wire.field(2, Buffer.from([0x80, 0xff]))]),
        ];
      default:
        return ['random values', valid()];
    }
  }

  const SERVICES: Array<['1.0' | '0.3', Definition]> = [
    ['1.0', A2AService as unknown as Definition],
    ['0.3', LegacyA2AService as unknown as Definition],
  ];
  const CASES = SERVICES.flatMap(([version, definition]) =>
    Object.entries(definition).map(([method, spec]) => [version, method, spec] as const),
  );

  it('fuzzes every RPC of both services', () => {
    expect(CASES).toHaveLength(21);
  });

  describe.each(CASES)('gRPC %s %s', (version, method, spec) => {
    it(`never answers INTERNAL or UNKNOWN (seed ${SEED})`, async () => {
      seeded(spec.path);
      const failures: string[] = [];
      for (let i = 0; i < 30; i++) {
        const [kind, bytes] = frame(version, method, (v) => spec.requestSerialize(v));
        const outcome: GrpcOutcome = await rawCall(client, spec.path, bytes, metadata(), spec.responseStream, 10_000);
        if (!ACCEPTABLE.has(outcome.code)) {
          failures.push(
            `${kind}: ${grpc.status[outcome.code]} ${outcome.details} (bytes ${bytes.subarray(0, 40).toString('hex')})`,
          );
        }
      }
      expect(failures).toEqual([]);
    });
  });

  it('stays healthy: the service answers, nothing was logged as its own failure', async () => {
    await t.http().get('/healthz').expect(200);
    const read = await rawCall(
      client,
      '/lf.a2a.v1.A2AService/GetTask',
      Buffer.concat([wire.field(1, worker.handle), wire.field(2, task.id)]),
      metadataOf(apiKey(requester.key)),
    );
    expect({ code: read.code, details: read.details }).toEqual({ code: grpc.status.OK, details: '' });
    expect(logged.filter((entry) => Number(entry.level) >= 50).map((entry) => entry.msg)).toEqual([]);
  });
});
