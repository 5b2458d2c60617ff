import { DeviceListCache, DeviceLists } from './device-lists';

describe('DeviceListCache', () => {
  let now = 1_000_000;
  const cache = () => new DeviceListCache(300_000, () => now);
  const devices = (user: string, ...numbers: number[]) => numbers.map((device) => ({ user, device, server: 's.whatsapp.net' }));

  beforeEach(() => (now = 1_000_000));

  it('should answer a list for its TTL, as Baileys reads and writes it (get/set, mget/mset, del)', async () => {
    const lists = cache();
    lists.set('551100', devices('551100', 0, 1));
    lists.mset([
      { key: '551101', value: devices('551101', 0) },
      { key: '551102', value: devices('551102', 0, 3) },
    ]);
    expect(lists.get('551100')).toEqual(devices('551100', 0, 1));
    expect(await lists.mget(['551101', '551102', 'unknown'])).toEqual({ '551101': devices('551101', 0), '551102': devices('551102', 0, 3) });
    lists.del('551101');
    expect(lists.get('551101')).toBeUndefined();
    now += 300_000;
    expect(lists.get('551100')).toBeUndefined();
    expect(await lists.mget(['551102'])).toEqual({});
  });

  it('should export the lists still live with their expiry, and seed another cache with them until then', () => {
    const giver = cache();
    giver.set('551100', devices('551100', 0));
    now += 200_000;
    giver.set('551101', devices('551101', 0, 2));
    const exported = giver.export();
    expect(exported).toEqual([
      { user: '551100', devices: devices('551100', 0), expiresAt: 1_300_000 },
      { user: '551101', devices: devices('551101', 0, 2), expiresAt: 1_500_000 },
    ]);
    const heir = cache();
    // A list the heir learnt itself is newer: kept.
    heir.set('551101', devices('551101', 0));
    heir.seed([
      ...exported,
      { user: '551103', devices: devices('551103', 0), expiresAt: now - 1 },
      { user: '551104', devices: 'bad' as never, expiresAt: now + 5 },
    ]);
    expect(heir.get('551100')).toEqual(devices('551100', 0));
    expect(heir.get('551101')).toEqual(devices('551101', 0));
    expect(heir.get('551103')).toBeUndefined();
    expect(heir.get('551104')).toBeUndefined();
    now += 100_000; // past the seeded list's own expiry, not the heir's TTL
    expect(heir.get('551100')).toBeUndefined();
  });

  it('should hand over at most its limit of lists, the freshest', () => {
    const lists = cache();
    for (let index = 0; index < 5; index++) {
      lists.set(`user${index}`, devices(`user${index}`, 0));
      now += 1_000;
    }
    expect(lists.export(2).map(({ user }) => user)).toEqual(['user4', 'user3']);
    expect(lists.export()).toHaveLength(5);
  });

  it('should never keep a seeded list past a full TTL from now', () => {
    const heir = cache();
    heir.seed([{ user: '551100', devices: devices('551100', 0), expiresAt: now + 3_600_000 }]);
    now += 300_000;
    expect(heir.get('551100')).toBeUndefined();
  });

  it('should drop expired lists as new ones come, so an instance messaging ever new users keeps five minutes of them', () => {
    const lists = cache();
    for (let index = 0; index < 1_000; index++) {
      lists.set(`user${index}`, devices(`user${index}`, 0));
      now += 1_000;
    }
    // 300 s of lists at one a second, and at most one sweep's worth (64 sets) more.
    expect(lists.size).toBeLessThanOrEqual(300 + 64);
    expect(lists.size).toBeGreaterThanOrEqual(300);
  });
});

describe('DeviceLists', () => {
  it('should give every socket of an instance the same cache, and a fresh one once the instance left the worker', () => {
    const registry = new DeviceLists();
    const first = registry.of('i1');
    expect(registry.of('i1')).toBe(first);
    expect(registry.of('i2')).not.toBe(first);
    first.set('551100', [{ user: '551100', device: 0 }]);
    expect(registry.export('i1')).toEqual([expect.objectContaining({ user: '551100' })]);
    expect(registry.export('i3')).toEqual([]);
    registry.forget('i1');
    expect(registry.of('i1')).not.toBe(first);
    expect(registry.instances).toBe(2);
  });
});
