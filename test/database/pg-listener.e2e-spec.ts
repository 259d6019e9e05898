import { createServer, connect, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import pino from 'pino';
import { PgListener } from '../../src/database/pg-listener';
import { CHANGES_CHANNEL, PgTaskNotifier, STANDING_KEY } from '../../src/events/task-notifier';
import { SERVER_URL } from '../support/database';
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
  const target = new URL(SERVER_URL);
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
          for (const socket of open) socket.destroy();
        },
        close: async () => {
          for (const socket of open) socket.destroy();
          await new Promise((done) => server.close(done));
        },
      });
    }),
  );
}

describe('the LISTEN connection', () => {
  const channel = `listener_test_${process.pid}`;
  const notify = async (payload: string, on = channel) => {
    const client = new Client({ connectionString: `${SERVER_URL}/postgres` });
    await client.connect();
    await client.query('SELECT pg_notify($1, $2)', [on, payload]);
    await client.end();
  };

  jest.setTimeout(30_000);

  it('PgListener: a connection that falls silent is found by its heartbeat, dropped and listened to again', async () => {
    const through = await relay();
    const heard: string[] = [];
    let reconnected = 0;
    const listener = new PgListener(
      through.url,
      channel,
      pino({ level: 'silent' }),
      { notification: (payload) => heard.push(payload), reconnected: () => (reconnected += 1) },
      100,
    );
    try {
      await listener.start();
      await notify('before');
      await eventually(
        async () => heard,
        (payloads) => payloads.includes('before'),
      );
      // Answered heartbeats keep it: several intervals pass without a reconnect.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect({ connected: listener.connected, reconnected }).toEqual({ connected: true, reconnected: 0 });

      through.silence();
      await eventually(
        async () => reconnected,
        (count) => count === 1,
      );
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
