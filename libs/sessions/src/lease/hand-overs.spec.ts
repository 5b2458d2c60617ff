import type { Lease, LeaseRepository } from '@gw/persistence';
import { AnnouncedHandOvers, drainHeirs, HandOverBatch, HEIR_HEAD_START_MS, heirOf, HeirPlan, heirsByRoom, intakeOf, surplusOf } from './hand-overs';

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

describe(heirsByRoom.name, () => {
  it("should give each live worker its room under the share, a smaller worker's under its capacity, none below zero", () => {
    expect(heirsByRoom(17, { 'w-a': 25, 'w-b': 25, 'w-c': 0 }, { 'w-a': 500, 'w-b': 500, 'w-c': 10 })).toEqual([
      { workerId: 'w-a', room: 0 },
      { workerId: 'w-b', room: 0 },
      { workerId: 'w-c', room: 10 },
    ]);
    expect(heirsByRoom(17, { 'w-a': 3 })).toEqual([{ workerId: 'w-a', room: 14 }]);
  });
});

describe(surplusOf.name, () => {
  const heirs = (held: Record<string, number>, share: number, capacity: Record<string, number> = {}) => heirsByRoom(share, held, capacity);

  it('should hand a worker that came back (or was added) its share: each over-share worker gives what it holds over the share', () => {
    // A rolling restart: w-c drained to w-a and w-b and came back empty. Share ceil(50 / 3) = 17.
    const held = { 'w-a': 25, 'w-b': 25, 'w-c': 0 };
    expect(surplusOf('w-a', 25, 17, heirs(held, 17))).toBe(8);
    expect(surplusOf('w-b', 25, 17, heirs(held, 17))).toBe(8);
    expect(surplusOf('w-c', 0, 17, heirs(held, 17))).toBe(0);
  });

  it("should give no more than the others have room for (their capacity counts), and nothing for the share's rounding", () => {
    expect(surplusOf('w-a', 40, 10, heirs({ 'w-a': 40, 'w-b': 7 }, 10))).toBe(3);
    expect(surplusOf('w-a', 40, 20, heirs({ 'w-a': 40, 'w-b': 0 }, 20, { 'w-b': 5 }))).toBe(5);
    // 4 and 2 of 6 (share 3): one moves.
    expect(surplusOf('w-a', 4, 3, heirs({ 'w-a': 4, 'w-b': 2 }, 3))).toBe(1);
    // The share's rounding: 26 and 25 of 51 on two workers (share 26), or 16, 16, 16, 13 of 61 on four: none over it.
    expect(surplusOf('w-a', 26, 26, heirs({ 'w-a': 26, 'w-b': 25 }, 26))).toBe(0);
    expect(surplusOf('w-a', 16, 16, heirs({ 'w-a': 16, 'w-b': 16, 'w-c': 16, 'w-d': 13 }, 16))).toBe(0);
    // Alone, or every other worker full: nothing to give.
    expect(surplusOf('w-a', 60, 50, heirs({ 'w-a': 60 }, 50))).toBe(0);
    expect(surplusOf('w-a', 60, 50, heirs({ 'w-a': 60, 'w-b': 80 }, 50))).toBe(0);
  });

  it('should end: moving a surplus one instance at a time never makes the heir give it back', () => {
    const held: Record<string, number> = { 'w-a': 30, 'w-b': 30, 'w-c': 0, 'w-d': 1 };
    const share = Math.ceil(61 / 4);
    let moves = 0;
    for (let step = 0; step < 200; step++) {
      const giver = Object.keys(held).find((id) => surplusOf(id, held[id], share, heirs(held, share)) > 0);
      if (!giver) break;
      const heir = heirOf(
        `inst-${step}`,
        heirs(held, share).filter((one) => one.workerId !== giver),
      )!;
      held[giver] -= 1;
      held[heir] += 1;
      moves += 1;
    }
    expect(Object.values(held).reduce((a, b) => a + b, 0)).toBe(61);
    // Nobody over the share any more (one under it by the share's rounding is balanced).
    expect(Math.max(...Object.values(held))).toBeLessThanOrEqual(share);
    // Exactly what was over the share moved, nothing more.
    expect(moves).toBe(30 - share + (30 - share));
  });
});

describe(intakeOf.name, () => {
  it('should owe a worker that came back what the others hold over the share, within its room', () => {
    // The rolling restart above: w-c is owed 8 by each of w-a and w-b (its room, 17, is more than their 16).
    expect(intakeOf('w-c', 17, { 'w-a': 25, 'w-b': 25, 'w-c': 0 })).toBe(16);
    // Half way: 4 more to come.
    expect(intakeOf('w-c', 17, { 'w-a': 19, 'w-b': 19, 'w-c': 12 })).toBe(4);
    // Its room bounds it (its capacity too), and so does the others' excess.
    expect(intakeOf('w-c', 17, { 'w-a': 40, 'w-b': 10, 'w-c': 0 })).toBe(17);
    expect(intakeOf('w-c', 17, { 'w-a': 40, 'w-b': 10, 'w-c': 0 }, { 'w-c': 5 })).toBe(5);
    expect(intakeOf('w-c', 17, { 'w-a': 18, 'w-b': 17, 'w-c': 0 })).toBe(1);
  });

  it("should owe nothing once balanced, to the share's rounding, nor to a worker alone or one the others owe nothing", () => {
    expect(intakeOf('w-c', 17, { 'w-a': 17, 'w-b': 17, 'w-c': 16 })).toBe(0);
    expect(intakeOf('w-d', 16, { 'w-a': 16, 'w-b': 16, 'w-c': 16, 'w-d': 13 })).toBe(0);
    expect(intakeOf('w-a', 50, { 'w-a': 0 })).toBe(0);
    // A new worker while the others hold only their share (few instances): nothing to wait for.
    expect(intakeOf('w-c', 1, { 'w-a': 1, 'w-b': 1, 'w-c': 0 })).toBe(0);
  });

  it('should count what nobody holds (an instance between its hand-over and its claim, an orphan) as still to come', () => {
    // A move under way: w-a handed one over (its lease counts for nobody), w-b has not claimed it yet.
    expect(intakeOf('w-b', 3, { 'w-a': 3, 'w-b': 2 }, {}, 6)).toBe(1);
    expect(intakeOf('w-b', 3, { 'w-a': 3, 'w-b': 3 }, {}, 6)).toBe(0);
    // Orphans of a dead worker (not a live one: not in heldBy), within the room.
    expect(intakeOf('w-b', 25, { 'w-a': 20, 'w-b': 0 }, {}, 50)).toBe(25);
    // Without the rebalance only those count.
    expect(intakeOf('w-c', 17, { 'w-a': 25, 'w-b': 25, 'w-c': 0 }, {}, 50, false)).toBe(0);
    expect(intakeOf('w-c', 17, { 'w-a': 20, 'w-b': 25, 'w-c': 0 }, {}, 50, false)).toBe(5);
  });

  it('should reach 0 exactly when the moves of a rebalance end', () => {
    const held: Record<string, number> = { 'w-a': 30, 'w-b': 30, 'w-c': 0, 'w-d': 1 };
    const share = Math.ceil(61 / 4);
    for (let step = 0; step < 200; step++) {
      const giver = Object.keys(held).find((id) => surplusOf(id, held[id], share, heirsByRoom(share, held)) > 0);
      const owed = intakeOf('w-c', share, held) + intakeOf('w-d', share, held);
      if (!giver) {
        expect(owed).toBe(0);
        break;
      }
      expect(owed).toBeGreaterThan(0);
      const heir = heirOf(
        `inst-${step}`,
        heirsByRoom(share, held).filter((one) => one.workerId !== giver),
      )!;
      held[giver] -= 1;
      held[heir] += 1;
    }
    expect(Math.max(...Object.values(held))).toBeLessThanOrEqual(share);
  });
});

describe(HeirPlan.name, () => {
  it('should split a drain by room exactly, in the order the instances are handed over', () => {
    const plan = new HeirPlan([
      { workerId: 'w-a', room: 8 },
      { workerId: 'w-b', room: 9 },
    ]);
    const heirs = ids(17).map((id) => plan.assign(id));
    expect(heirs.filter((heir) => heir === 'w-a')).toHaveLength(8);
    expect(heirs.filter((heir) => heir === 'w-b')).toHaveLength(9);
    // The first goes to the one with the most room; then they alternate as their rooms meet.
    expect(heirs[0]).toBe('w-b');
  });

  it('should spread what is over every room evenly, and name nobody without heirs', () => {
    const plan = new HeirPlan([
      { workerId: 'w-a', room: 0 },
      { workerId: 'w-b', room: 2 },
      { workerId: 'w-c', room: 0 },
    ]);
    const heirs = ids(11).map((id) => plan.assign(id));
    expect(heirs.slice(0, 2)).toEqual(['w-b', 'w-b']);
    const counts = ['w-a', 'w-b', 'w-c'].map((worker) => heirs.filter((heir) => heir === worker).length);
    expect(counts).toEqual([3, 5, 3]);
    expect(new HeirPlan([]).assign('inst-1')).toBeUndefined();
  });

  it('should name the same heirs for the same rooms and order (it is a plan, not a draw)', () => {
    const rooms = [
      { workerId: 'w-a', room: 3 },
      { workerId: 'w-b', room: 3 },
    ];
    const one = new HeirPlan(rooms);
    const two = new HeirPlan(rooms);
    expect(ids(6).map((id) => one.assign(id))).toEqual(ids(6).map((id) => two.assign(id)));
  });

  function ids(n: number): string[] {
    return Array.from({ length: n }, (_, i) => `inst-${i}`);
  }
});

describe(drainHeirs.name, () => {
  it("should give the workers left their room under the share without the drainer (a smaller one's under its capacity)", () => {
    const standing = { wanted: 50, workerIds: ['w-a', 'w-b', 'w-c'], heldBy: { 'w-a': 17, 'w-b': 16, 'w-c': 17 }, capacityBy: { 'w-b': 20 } };
    expect(drainHeirs('w-c', standing)).toEqual([
      { workerId: 'w-a', room: 8 },
      { workerId: 'w-b', room: 4 },
    ]);
    expect(drainHeirs('w-a', { wanted: 5, workerIds: ['w-a'], heldBy: { 'w-a': 5 }, capacityBy: {} })).toEqual([]);
  });
});

describe('AnnouncedHandOvers with named heirs (ADR 0058)', () => {
  it('should take what the drainer named for it, leave what it named for another, whatever the rooms say', () => {
    const workers = [
      { workerId: 'w-a', room: 10 },
      { workerId: 'w-b', room: 0 },
    ];
    const a = new AnnouncedHandOvers('w-a');
    const b = new AnnouncedHandOvers('w-b');
    const named = { 'inst-1': 'w-b', 'inst-2': 'w-a', 'inst-3': 'w-b' };
    a.add(Object.keys(named), named);
    b.add(Object.keys(named), named);
    // By room alone w-b would take none of them.
    expect(a.take(100, () => false, workers)).toEqual(['inst-2']);
    expect(b.take(100, () => false, workers)).toEqual(['inst-1', 'inst-3']);
    expect(a.leftToAnother('inst-1')).toBe(true);
    // An instance announced again without a name (an older worker's notice) goes by rendezvous hashing.
    a.add(['inst-1']);
    expect(a.take(100, () => false, workers)).toEqual(['inst-1']);
  });
});
