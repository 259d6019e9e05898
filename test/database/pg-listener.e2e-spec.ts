import { createServer, connect, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import pino from 'pino';
import { PgListener } from '../../src/database/pg-listener';
import { CHANGES_CHANNEL, PgTaskNotifier, STANDING_KEY } from '../../src/events/task-notifier';
import { serverUrl } from '../support/database';
import { eventually } from '../support/eventually';

interface Relay {
  url: string;
  /** The connections carried so far stay open but pass nothing on; new ones are relayed. */
  silence(): void;
  /** Closes every connection; with `refusing`, new ones too until told otherwise. */
  cut(refusing: boolean): void;
  close(): Promise<void>;
}

/**
 * A TCP relay to PostgreSQL that can fall silent — the connections it carries stay
 * open but pass nothing on (a server gone without a word, a dropped route), as a
 * network can — or cut its connections and refuse new ones, as a server that went away.
 */
function relay(): Promise<Relay> {
  const target = new URL(serverUrl());
  const open = new Set<Socket>();
  let carried: Socket[] = [];
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    carried.push(client, upstream);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    }
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `postgres://${target.username}@127.0.0.1:${port}/postgres`,
        silence: () => {
          for (const socket of carried) {
            socket.unpipe();
            socket.pause();
          }
          carried = [];
        },
        cut: (refuse) => {
          refusing = refuse;
          for (const socket of open) {
            socket.destroy();
          }
        },
        close: async () => {
          for (const socket of open) {
            socket.destroy();
          }
          await new Promise((done) => server.close(done));
        },
      });
    }),
  );
}

describe('the LISTEN connection', () => {
  const channel = `listener_test_${process.pid}`;
  const notify = async (payload: string, on = channel) => {
    const client = new Client({ connectionString: `${serverUrl()}/postgres` });
    await client.connect();
    await client.query('SELECT pg_notify($1, $2)', [on, payload]);
    await client.end();
  };

  jest.setTimeout(30_000);

  it('PgListener: a connection that falls silent is found by its heartbeat, dropped and listened to again', async () => {
    const through = await relay();
    const heard: string[] = [];
    let lost = 0;
    let reconnected = 0;
    const connectedWhenTold: boolean[] = [];
    const listener = new PgListener(
      through.url,
      channel,
      pino({ level: 'silent' }),
      {
        notification: (payload) => heard.push(payload),
        lost: () => (lost += 1),
        // Told as the connection comes back, in the same turn.
        listening: (again) => {
          if (!again) {
            return;
          }
          reconnected += 1;
          connectedWhenTold.push(listener.connected);
        },
      },
      500,
    );
    try {
      await listener.start();
      await notify('before');
      await eventually(
        async () => heard,
        (payloads) => payloads.includes('before'),
      );
      // Answered heartbeats keep it: three intervals pass without a loss.
      await new Promise((resolve) => setTimeout(resolve, 1600));
      expect({ connected: listener.connected, lost, reconnected }).toEqual({
        connected: true,
        lost: 0,
        reconnected: 0,
      });

      through.silence();
      await eventually(
        async () => reconnected,
        (count) => count >= 1,
      );
      expect(lost).toBeGreaterThanOrEqual(1);
      expect(connectedWhenTold.every(Boolean)).toBe(true);
      expect(listener.connected).toBe(true);
      await notify('after');
      await eventually(
        async () => heard,
        (payloads) => payloads.includes('after'),
      );
    } finally {
      await listener.stop();
      await through.close();
    }
  });

  it('PgListener: stops on a connection fallen silent, too', async () => {
    const through = await relay();
    const listener = new PgListener(through.url, channel, pino({ level: 'silent' }), {
      notification: () => undefined,
      lost: () => undefined,
      listening: () => undefined,
    });
    try {
      await listener.start();
      through.silence();
      await listener.stop();
      expect(listener.connected).toBe(false);
    } finally {
      await through.close();
    }
  });

  it("PgTaskNotifier wakes this instance's watches by the channel while it hears it, itself a little later should nothing come, and at once while it is down", async () => {
    const through = await relay();
    const notifier = new PgTaskNotifier(through.url, pino({ level: 'silent' }));
    const woken: Array<[number, boolean]> = [];
    const unsubscribe = notifier.subscribe('t1', (seq, announced) => woken.push([seq, announced]));
    try {
      await notifier.onModuleInit();
      // Healthy: the commit's notification comes by the channel, announced; its late wake-up, unannounced, is no news to a watch by then.
      await notify('t1:2', CHANGES_CHANNEL);
      await eventually(
        async () => woken.length,
        (count) => count === 1,
      );
      notifier.committed({ taskId: 't1', seq: 2 });
      await eventually(
        async () => woken.length,
        (count) => count === 2,
      );
      expect(woken).toEqual([
        [2, true],
        [2, false],
      ]);
      // Silent: nothing comes by the channel, the late wake-up still does.
      woken.length = 0;
      through.silence();
      notifier.committed({ taskId: 't1', seq: 3 });
      expect(woken).toEqual([]);
      await eventually(
        async () => woken,
        (calls) => calls.length > 0,
      );
      expect(woken[0]).toEqual([3, false]);
      // Down: the loss wakes every watch, and a commit wakes its watches at once.
      through.cut(true);
      await eventually(
        async () => notifier.healthy(),
        (healthy) => !healthy,
      );
      woken.length = 0;
      notifier.committed({ taskId: 't1', seq: 4 });
      expect(woken).toEqual([[4, false]]);
    } finally {
      unsubscribe();
      await notifier.onModuleDestroy();
      await through.close();
    }
  });

  it('PgTaskNotifier counts no standing change while it cannot hear them, and counts a reconnect as one', async () => {
    const through = await relay();
    const notifier = new PgTaskNotifier(through.url, pino({ level: 'silent' }));
    try {
      expect(notifier.standingChangedAt()).toBe(Number.POSITIVE_INFINITY);
      await notifier.onModuleInit();
      const listening = notifier.standingChangedAt();
      expect(listening).toBeLessThan(performance.now());

      await notify(`${STANDING_KEY}:0`, CHANGES_CHANNEL);
      const heard = await eventually(
        async () => notifier.standingChangedAt(),
        (at) => at > listening,
      );

      through.cut(true);
      await eventually(
        async () => notifier.standingChangedAt(),
        (at) => at === Number.POSITIVE_INFINITY,
      );
      through.cut(false);
      const again = await eventually(async () => notifier.standingChangedAt(), Number.isFinite);
      expect(again).toBeGreaterThan(heard);
    } finally {
      await notifier.onModuleDestroy();
      await through.close();
    }
  });
});
