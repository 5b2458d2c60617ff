import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { ContactRepository, InstanceRepository, LidMappingRepository } from '@gw/persistence';

describe('a contact seen by LID and later by phone number is one contact', () => {
  let db: TestDatabase;
  const instanceId = 'rcontacttest';
  const observe = (observation: Parameters<typeof ContactRepository.observeWithin>[2]) =>
    db.dataSource.transaction((manager) => ContactRepository.observeWithin(manager, instanceId, observation));

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-contact', name: 'c' });
  });
  afterAll(() => db.close());

  it('should key a contact by its LID until the number is known, then move it to the number', async () => {
    const first = await observe({ lid: '333@lid', pushName: 'Carla' });
    expect(first).toMatchObject({ changed: true, contact: { jid: '333@lid', lid: '333@lid', pushName: 'Carla' } });
    const second = await observe({ jid: '5511900000003@s.whatsapp.net', lid: '333@lid', contactName: 'Carla (agenda)' });
    expect(second).toMatchObject({
      changed: true,
      contact: { jid: '5511900000003@s.whatsapp.net', lid: '333@lid', pushName: 'Carla', contactName: 'Carla (agenda)' },
    });
    const rows = await db.dataSource.query(`SELECT jid FROM contacts WHERE instance_id = $1`, [instanceId]);
    expect(rows).toEqual([{ jid: '5511900000003@s.whatsapp.net' }]);
    expect(await new ContactRepository(db.dataSource).find(instanceId, '333@lid')).toMatchObject({ jid: '5511900000003@s.whatsapp.net' });
  });

  it('should report no change when nothing new is said', async () => {
    const again = await observe({ lid: '333@lid', pushName: 'Carla' });
    expect(again.changed).toBe(false);
    const renamed = await observe({ lid: '333@lid', pushName: 'Carla S.' });
    expect(renamed).toMatchObject({ changed: true, contact: { jid: '5511900000003@s.whatsapp.net', pushName: 'Carla S.' } });
  });

  it('should store LID pairs once and answer both ways', async () => {
    const store = (pairs: Array<{ lid: string; pn: string }>) =>
      db.dataSource.transaction((manager) => LidMappingRepository.storeWithin(manager, instanceId, pairs));
    expect(await store([{ lid: '444@lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(1);
    expect(await store([{ lid: '444@lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(0);
    expect(await store([{ lid: 'not-a-lid', pn: '5511900000004@s.whatsapp.net' }])).toHaveLength(0);
    const mappings = new LidMappingRepository(db.dataSource);
    expect(await mappings.pnForLid(instanceId, '444@lid')).toBe('5511900000004@s.whatsapp.net');
    expect(await mappings.lidForPn(instanceId, '5511900000004@s.whatsapp.net')).toBe('444@lid');
  });
});
