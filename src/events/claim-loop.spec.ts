import pino from 'pino';
import { ClaimLoop, type FairKeys, type HeldShares } from './claim-loop';

interface Item extends FairKeys {
  id: number;
}

/** The loop both the dispatcher and the forwarder run: slots, shares, hand-overs and releases. */
describe('ClaimLoop', () => {
  const item = (id: number, organization: string, destination = `d-${organization}`): Item => ({
    id,
    organization,
    destination,
    destinationShare: 2,
  });

  function loop(queue: Item[]) {
    const running: Item[] = [];
    const finishers = new Map<number, () => void>();
    const claims = new ClaimLoop<Item>({
      what: 'items',
      slots: 4,
      organizationShare: 3,
      pollIntervalMs: 10,
      logger: pino({ level: 'silent' }),
      // The queue's claim: due items whose destination and organization have room, in order.
      claim: async (limit, held) => {
        const picked: Item[] = [];
        const count = (map: ReadonlyMap<string, number>, key: string, extra: number) => (map.get(key) ?? 0) + extra;
        for (const candidate of [...queue]) {
          if (picked.length === limit) {
            break;
          }
          const sameOrg = picked.filter((p) => p.organization === candidate.organization).length;
          const sameDestination = picked.filter((p) => p.destination === candidate.destination).length;
          if (count(held.heldByOrganization, candidate.organization, sameOrg) >= held.organizationShare) {
            continue;
          }
          if (count(held.heldByDestination, candidate.destination, sameDestination) >= candidate.destinationShare) {
            continue;
          }
          picked.push(candidate);
          queue.splice(queue.indexOf(candidate), 1);
        }
        return picked;
      },
      run: (it) =>
        new Promise<void>((resolve) => {
          running.push(it);
          finishers.set(it.id, () => {
            running.splice(running.indexOf(it), 1);
            resolve();
          });
        }),
    });
    return { claims, running, finishers };
  }
  const tick = () => new Promise((resolve) => setTimeout(resolve, 30));

  it('keeps an organization and a destination within their shares, and the rest to the others', async () => {
    const queue = [item(1, 'a', 'x'), item(2, 'a', 'x'), item(3, 'a', 'x'), item(4, 'a', 'y'), item(5, 'b')];
    const { claims, running, finishers } = loop(queue);
    claims.start();
    await tick();
    // Destination x: 2 (its share); organization a: 3 (its share); b gets the fourth slot.
    expect(running.map((it) => it.id).sort()).toEqual([1, 2, 4, 5]);
    expect(claims.hasRoom(item(9, 'a'))).toBe(false);
    finishers.get(1)!();
    await tick();
    expect(running.map((it) => it.id).sort()).toEqual([2, 3, 4, 5]);
    for (const finish of finishers.values()) {
      finish();
    }
    await claims.stop();
    await claims.settled();
  });

  it("releases a claimed item whose share its owner's own begins took while the claim ran", async () => {
    const released: Item[] = [];
    const ran: number[] = [];
    let claimed = false;
    let gate!: () => void;
    const claims = new ClaimLoop<Item>({
      what: 'items',
      slots: 4,
      organizationShare: 3,
      pollIntervalMs: 10,
      logger: pino({ level: 'silent' }),
      // Organization a has room when the claim starts; the claim answers only once the gate opens.
      claim: async () => {
        if (claimed) {
          return [];
        }
        claimed = true;
        await new Promise<void>((resolve) => (gate = resolve));
        return [item(4, 'a', 'z')];
      },
      run: async (it) => {
        ran.push(it.id);
        await new Promise(() => undefined);
      },
      release: async (it) => {
        released.push(it);
      },
    });
    claims.start();
    await tick();
    // Meanwhile the owner hands over three items of organization a: its share.
    for (const id of [1, 2, 3]) {
      claims.begin(item(id, 'a', `d${id}`));
    }
    gate();
    await tick();
    expect(ran).toEqual([1, 2, 3]);
    expect(released.map((it) => it.id)).toEqual([4]);
    await claims.stop();
  });

  it('tells its claim which destinations and organizations are at the share each was claimed with', async () => {
    const told: HeldShares[] = [];
    const claims = new ClaimLoop<Item>({
      what: 'items',
      slots: 4,
      organizationShare: 3,
      pollIntervalMs: 10,
      logger: pino({ level: 'silent' }),
      claim: async (_, held) => {
        told.push({ ...held, heldByDestination: new Map(held.heldByDestination) });
        return [];
      },
      run: () => new Promise<void>(() => undefined),
    });
    // a: one item of a share of one (a cancel's, say) fills its destination and organization;
    // b: its destination's share of two is full, its organization (the loop's share, 3) is not.
    claims.begin({ ...item(1, 'a', 'x'), destinationShare: 1, organizationShare: 1 });
    claims.begin(item(2, 'b', 'y'));
    claims.begin(item(3, 'b', 'y'));
    claims.start();
    await tick();
    expect(told[0]).toMatchObject({
      heldByDestination: new Map([
        ['x', 1],
        ['y', 2],
      ]),
      fullDestinations: ['x', 'y'],
      fullOrganizations: ['a'],
      organizationShare: 3,
    });
    await claims.stop();
  });
});
