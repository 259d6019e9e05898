import type { AppConfig } from '../config/config';
import { KeyLookup } from './key-lookup';
import type { KeysRepository, VerifiedKey } from './keys.repository';

type Row = VerifiedKey & { position: number };

/** A repository whose statements stay unanswered until the test answers them. */
function fakeRepository() {
  const calls: Array<{ hashes: Buffer[]; answer: (rows: Row[]) => void; fail: (error: Error) => void }> = [];
  const repository = {
    findByHashes: (hashes: Buffer[]) =>
      new Promise<Row[]>((answer, fail) => {
        calls.push({ hashes, answer, fail });
      }),
  } as unknown as KeysRepository;
  return { repository, calls };
}

const hash = (n: number) => Buffer.alloc(32, n);
/** Where lookups batch by turn (PGlite) … */
const EMBEDDED = { databaseUrl: null } as AppConfig;
/** … and where a lookup asked while none is out goes at once (PostgreSQL). */
const POSTGRES = { databaseUrl: 'postgres://127.0.0.1/a2a' } as AppConfig;
const row = (position: number, id: string, status: 'active' | 'revoked' = 'active') =>
  ({ position, id, status }) as unknown as Row;
/** Lets pending callbacks, then the event loop's check phase, run (twice: a settled statement schedules the next). */
const turn = async () => {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
};

/** Whether the promise has settled by now. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await turn();
  return done;
}

describe('KeyLookup', () => {
  it('sends the lookups of one turn as one statement, one hash per key', async () => {
    const { repository, calls } = fakeRepository();
    const lookup = new KeyLookup(repository, EMBEDDED);
    const first = lookup.find(hash(1));
    const again = lookup.find(hash(1));
    const other = lookup.find(hash(2));
    const unknown = lookup.find(hash(3));
    await turn();
    expect(calls).toHaveLength(1);
    expect(calls[0].hashes).toEqual([hash(1), hash(2), hash(3)]);
    calls[0].answer([row(2, 'b'), row(1, 'a')]);
    expect((await first)?.id).toBe('a');
    expect((await again)?.id).toBe('a');
    expect((await other)?.id).toBe('b');
    expect(await unknown).toBeNull();
    expect(await first).not.toHaveProperty('position');
  });

  it('never answers a lookup with a statement sent before it was asked (a revocation in between is seen)', async () => {
    const { repository, calls } = fakeRepository();
    const lookup = new KeyLookup(repository, EMBEDDED);
    const before = lookup.find(hash(1));
    await turn();
    expect(calls).toHaveLength(1);
    // Asked while the first statement is out: it waits for a statement of its own.
    const after = lookup.find(hash(1));
    await turn();
    expect(calls).toHaveLength(2);
    calls[0].answer([row(1, 'a', 'active')]);
    expect((await before)?.status).toBe('active');
    expect(await settled(after)).toBe(false);
    calls[1].answer([row(1, 'a', 'revoked')]);
    expect((await after)?.status).toBe('revoked');
  });

  it('keeps at most two statements out; later lookups go together in the next one', async () => {
    const { repository, calls } = fakeRepository();
    const lookup = new KeyLookup(repository, EMBEDDED);
    const one = lookup.find(hash(1));
    await turn();
    const two = lookup.find(hash(2));
    await turn();
    const three = lookup.find(hash(3));
    const four = lookup.find(hash(1));
    await turn();
    expect(calls).toHaveLength(2);
    calls[1].answer([]);
    expect(await two).toBeNull();
    await turn();
    expect(calls).toHaveLength(3);
    expect(calls[2].hashes).toEqual([hash(3), hash(1)]);
    calls[0].answer([row(1, 'old')]);
    calls[2].answer([row(2, 'new')]);
    expect((await one)?.id).toBe('old');
    expect((await four)?.id).toBe('new');
    expect(await three).toBeNull();
  });

  it('fails every lookup of a statement that fails, and goes on with the next', async () => {
    const { repository, calls } = fakeRepository();
    const lookup = new KeyLookup(repository, EMBEDDED);
    const a = lookup.find(hash(1));
    const b = lookup.find(hash(2));
    await turn();
    calls[0].fail(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await expect(b).rejects.toThrow('connection lost');
    const c = lookup.find(hash(1));
    await turn();
    calls[1].answer([row(1, 'a')]);
    expect((await c)?.id).toBe('a');
  });

  it('on PostgreSQL, a lookup begun on arrival goes at once; the rest of its turn gathers behind it', async () => {
    const { repository, calls } = fakeRepository();
    const lookup = new KeyLookup(repository, POSTGRES);
    const first = lookup.find(hash(1), true);
    const second = lookup.find(hash(2), true);
    const third = lookup.find(hash(3), true);
    expect(calls.map((call) => call.hashes)).toEqual([[hash(1)]]);
    await turn();
    expect(calls.map((call) => call.hashes)).toEqual([[hash(1)], [hash(2), hash(3)]]);
    calls[0].answer([row(1, 'a')]);
    calls[1].answer([row(2, 'c'), row(1, 'b')]);
    expect(await Promise.all([first, second, third].map(async (found) => (await found)?.id))).toEqual(['a', 'b', 'c']);
  });

  it('a lookup the guard asks for, or one on the embedded database, waits for its turn', async () => {
    for (const [config, arriving] of [
      [POSTGRES, false],
      [EMBEDDED, true],
    ] as const) {
      const { repository, calls } = fakeRepository();
      const found = new KeyLookup(repository, config).find(hash(1), arriving);
      expect(calls).toHaveLength(0);
      await turn();
      expect(calls).toHaveLength(1);
      calls[0].answer([row(1, 'a')]);
      expect((await found)?.id).toBe('a');
    }
  });
});
