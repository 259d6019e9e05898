import { CoalescedLookup } from './coalesced-lookup';

/** A fetch whose batches are answered by hand. */
function controlledFetch() {
  const batches: Array<{ keys: string[]; answer: (rows: Array<string | null>) => void; fail: (e: Error) => void }> = [];
  const fetch = (keys: string[]) =>
    new Promise<Array<string | null>>((answer, fail) => batches.push({ keys, answer, fail }));
  return { batches, lookup: new CoalescedLookup<string, string>(fetch, (key) => key) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescedLookup', () => {
  it('answers the lookups of one turn with one fetch, each key asked once, each waiter its own row', async () => {
    const { batches, lookup } = controlledFetch();
    const answers = Promise.all([lookup.find('a'), lookup.find('b'), lookup.find('a'), lookup.find('c')]);
    await turn();
    expect(batches.map((b) => b.keys)).toEqual([['a', 'b', 'c']]);
    batches[0].answer(['A', null, 'C']);
    await expect(answers).resolves.toEqual(['A', null, 'A', 'C']);
  });

  it('never answers a lookup with a batch sent before it was asked', async () => {
    const { batches, lookup } = controlledFetch();
    const first = lookup.find('k');
    await turn();
    const second = lookup.find('k'); // the first batch is out: this one waits for a new statement
    await turn();
    expect(batches.map((b) => b.keys)).toEqual([['k'], ['k']]);
    batches[1].answer(['new']);
    batches[0].answer(['old']);
    await expect(first).resolves.toBe('old');
    await expect(second).resolves.toBe('new');
  });

  it('holds lookups back while two batches are out, then sends them together', async () => {
    const { batches, lookup } = controlledFetch();
    const a = lookup.find('a');
    await turn();
    const b = lookup.find('b');
    await turn();
    const later = [lookup.find('c'), lookup.find('d')];
    await turn();
    expect(batches).toHaveLength(2);
    batches[0].answer(['A']);
    await a;
    await turn();
    await turn(); // the freed slot's batch goes out on the turn after the answer
    expect(batches.map((x) => x.keys)).toEqual([['a'], ['b'], ['c', 'd']]);
    batches[1].answer(['B']);
    batches[2].answer(['C', 'D']);
    await expect(Promise.all([b, ...later])).resolves.toEqual(['B', 'C', 'D']);
  });

  it('rejects the lookups of a failed batch only', async () => {
    const { batches, lookup } = controlledFetch();
    const failed = lookup.find('a');
    await turn();
    const fine = lookup.find('b');
    await turn();
    batches[0].fail(new Error('boom'));
    batches[1].answer(['B']);
    await expect(failed).rejects.toThrow('boom');
    await expect(fine).resolves.toBe('B');
  });

  it('atOnce: alone, a lookup goes at once; those asked while it is out gather for the next batch', async () => {
    const { batches, lookup } = controlledFetch();
    const first = lookup.find('a', true);
    expect(batches.map((b) => b.keys)).toEqual([['a']]); // sent before this turn ends
    const gathered = [lookup.find('b', true), lookup.find('c', true)];
    expect(batches).toHaveLength(1);
    await turn();
    expect(batches.map((b) => b.keys)).toEqual([['a'], ['b', 'c']]);
    batches[0].answer(['A']);
    batches[1].answer(['B', 'C']);
    await expect(Promise.all([first, ...gathered])).resolves.toEqual(['A', 'B', 'C']);
    // Nothing out any more, but the last batch held several: lookups are coming in
    // numbers, so the next waits for its turn and gathers with the others.
    const busy = [lookup.find('d', true), lookup.find('e', true)];
    expect(batches).toHaveLength(2);
    await turn();
    expect(batches.map((b) => b.keys)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
    batches[2].answer(['D', 'E']);
    await expect(Promise.all(busy)).resolves.toEqual(['D', 'E']);
  });

  it('atOnce: one at a time again, a lookup goes at once again', async () => {
    const { batches, lookup } = controlledFetch();
    const gathered = [lookup.find('a', true), lookup.find('b', true)];
    await turn(); // 'a' went at once, 'b' after the turn
    batches.forEach((batch, i) => batch.answer([i === 0 ? 'A' : 'B']));
    await Promise.all(gathered);
    const alone = lookup.find('c', true); // the last batch held one: at once
    expect(batches.map((b) => b.keys)).toEqual([['a'], ['b'], ['c']]);
    batches[2].answer(['C']);
    await expect(alone).resolves.toBe('C');
  });
});
