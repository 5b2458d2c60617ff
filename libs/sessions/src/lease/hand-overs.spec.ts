import type { Lease, LeaseRepository } from '@gw/persistence';
import { AnnouncedHandOvers, HandOverBatch, HEIR_HEAD_START_MS, heirOf } from './hand-overs';

describe(AnnouncedHandOvers.name, () => {
  const ids = Array.from({ length: 200 }, (_, i) => `inst-${i}`);
  const workers = ['w-a', 'w-b', 'w-c'].map((workerId) => ({ workerId, room: 10 }));

  it('should give each announced instance to exactly one heir, about evenly, whatever order they were announced in', () => {
    const parts = workers.map(({ workerId }, n) => {
      const announced = new AnnouncedHandOvers(workerId);
      announced.add(n % 2 ? [...ids].reverse() : ids);
      return announced.take(1_000, () => false, [...workers].reverse());
    });
    expect(parts.flat().sort()).toEqual([...ids].sort());
    for (const part of parts) expect(part.length).toBeGreaterThan(200 / 3 - 25);
    for (const part of parts) expect(part.length).toBeLessThan(200 / 3 + 25);
    expect(parts[0].every((id) => heirOf(id, workers) === 'w-a')).toBe(true);
  });

  it('should give at most the room, skip what this worker holds or claims, and forget them all once taken', () => {
    const announced = new AnnouncedHandOvers('w-a');
    const mine = ids.filter((id) => heirOf(id, workers) === 'w-a');
    announced.add(ids);
    const taken = announced.take(5, (id) => id === mine[0] || id === mine[1], workers);
    expect(taken).toEqual(mine.slice(2, 7));
    expect(announced.take(5, () => false, workers)).toEqual([]);
  });

  it("should leave another heir's instances out of this worker's scans for a head start, then scan for what it left", () => {
    jest.useFakeTimers();
    try {
      let now = 1_000_000;
      const announced = new AnnouncedHandOvers('w-a', () => now);
      const others = ids.filter((id) => heirOf(id, workers) !== 'w-a');
      announced.add(ids);
      announced.take(1_000, () => false, workers);
      const scan = jest.fn();
      announced.afterHeadStarts(scan);
      expect(announced.leftToAnother(others[0])).toBe(true);
      expect(announced.leftToAnother(ids.find((id) => heirOf(id, workers) === 'w-a')!)).toBe(false);
      now += HEIR_HEAD_START_MS;
      jest.advanceTimersByTime(HEIR_HEAD_START_MS + 10);
      expect(scan).toHaveBeenCalledTimes(1);
      expect(announced.leftToAnother(others[0])).toBe(false);
    } finally {
      jest.useRealTimers();
    }
  });

  it('should count itself an heir even when the live workers it read do not name it', () => {
    const announced = new AnnouncedHandOvers('w-new');
    announced.add(ids);
    expect(announced.take(1_000, () => false, [{ workerId: 'w-a', room: 10 }]).length).toBeGreaterThan(50);
  });

  it("should share a drain in proportion to the heirs' room under the fair share, and give none to a worker at its share", () => {
    // A rolling restart's third drain: w-a was restarted (empty), w-b holds its share, w-c half of it.
    const heirs = [
      { workerId: 'w-a', room: 17 },
      { workerId: 'w-b', room: 0 },
      { workerId: 'w-c', room: 8 },
    ];
    const parts = heirs.map(({ workerId }) => {
      const announced = new AnnouncedHandOvers(workerId);
      announced.add(ids);
      return announced.take(1_000, () => false, heirs);
    });
    expect(parts.flat().sort()).toEqual([...ids].sort());
    expect(parts[1]).toEqual([]);
    expect(parts[0].length / parts[2].length).toBeGreaterThan(1.5);
    expect(parts[0].length / parts[2].length).toBeLessThan(3);
  });

  it('should weigh every heir the same when none has room, and move only what a changed room moves', () => {
    const full = ['w-a', 'w-b'].map((workerId) => ({ workerId, room: 0 }));
    const ofA = ids.filter((id) => heirOf(id, full) === 'w-a').length;
    expect(ofA).toBeGreaterThan(70);
    expect(ofA).toBeLessThan(130);
    const before = [
      { workerId: 'w-a', room: 10 },
      { workerId: 'w-b', room: 10 },
      { workerId: 'w-c', room: 10 },
    ];
    const after = [
      { workerId: 'w-a', room: 10 },
      { workerId: 'w-b', room: 10 },
      { workerId: 'w-c', room: 5 },
    ];
    // w-c's smaller room only moves instances away from w-c.
    for (const id of ids) if (heirOf(id, before) !== 'w-c') expect(heirOf(id, after)).toBe(heirOf(id, before));
  });
});

describe(HandOverBatch.name, () => {
  it('should hand over the leases given back in one turn in one statement, then announce them', async () => {
    const statements: string[][] = [];
    const announced: string[][] = [];
    const repository = { handOver: async (leases: Lease[]) => void statements.push(leases.map((lease) => lease.instanceId)) } as unknown as LeaseRepository;
    const batch = new HandOverBatch(repository, (instanceIds) => announced.push(instanceIds));
    const lease = (instanceId: string): Lease => ({ instanceId, workerId: 'w', fencingToken: '1' });
    await Promise.all([batch.add(lease('a')), batch.add(lease('b'))]);
    await batch.add(lease('c'));
    await batch.settled();
    expect(statements).toEqual([['a', 'b'], ['c']]);
    expect(announced).toEqual([['a', 'b'], ['c']]);
  });
});
