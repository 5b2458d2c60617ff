import type { Lease, LeaseRepository } from '@gw/persistence';
import { AnnouncedHandOvers, HandOverBatch } from './hand-overs';

describe(AnnouncedHandOvers.name, () => {
  const ids = Array.from({ length: 20 }, (_, i) => `inst-${i}`);

  it('should give at most the room, skip what this worker holds or claims, and forget them all once taken', () => {
    const announced = new AnnouncedHandOvers('w-a');
    announced.add(ids);
    const taken = announced.take(5, (id) => id === 'inst-3' || id === 'inst-7');
    expect(taken).toHaveLength(5);
    expect(taken).not.toContain('inst-3');
    expect(taken).not.toContain('inst-7');
    expect(new Set(taken).size).toBe(5);
    expect(announced.take(5, () => false)).toEqual([]);
  });

  it('should order them differently for two heirs, so that they start on different instances', () => {
    const [a, b] = [new AnnouncedHandOvers('w-a'), new AnnouncedHandOvers('w-b')];
    a.add(ids);
    b.add(ids);
    const [firstOfA, firstOfB] = [a.take(10, () => false), b.take(10, () => false)];
    expect(firstOfA).not.toEqual(firstOfB);
    // The same worker always orders them the same way.
    const again = new AnnouncedHandOvers('w-a');
    again.add([...ids].reverse());
    expect(again.take(10, () => false)).toEqual(firstOfA);
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
