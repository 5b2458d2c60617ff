import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { FencedOutError, InstanceRepository, LeaseRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { InboundStore } from '../src/messaging/inbound-store';

describe(InboundStore.name, () => {
  let db: TestDatabase;
  const bus = new InProcessBus();
  const instanceId = 'fenced-inbound';
  const notices: unknown[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-fenced', name: 'fenced' });
    bus.subscribe(Subjects.outbox(instanceId), async (data) => {
      notices.push(data);
    });
  });
  afterAll(async () => {
    await bus.close();
    await db.close();
  });

  const outbox = () => db.dataSource.query(`SELECT event_type, chat_id FROM outbox_events WHERE instance_id = $1 ORDER BY id`, [instanceId]);

  it('should write the change and its events together and then publish a notice', async () => {
    const lease = (await new LeaseRepository(db.dataSource).claim(instanceId, 'worker-a', 10_000))!;
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }));
    await sut.write(lease, async (manager, events) => {
      await manager.query(`INSERT INTO lid_mappings (instance_id, lid, pn) VALUES ($1, '1@lid', '5511900000001@s.whatsapp.net')`, [instanceId]);
      events.push({ eventType: 'messages', chatId: '5511900000001@s.whatsapp.net', payload: { EventType: 'messages' } });
    });
    expect(await outbox()).toEqual([{ event_type: 'messages', chat_id: '5511900000001@s.whatsapp.net' }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(notices).toEqual([{ instanceId, lastId: expect.any(String) }]);
  });

  it('should write nothing for a worker whose lease was taken over', async () => {
    const leases = new LeaseRepository(db.dataSource);
    const stale = (await leases.holderOf(instanceId))!;
    await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [instanceId]);
    await leases.claim(instanceId, 'worker-b', 10_000);
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }));
    await expect(
      sut.write(stale, async (manager, events) => {
        await manager.query(`INSERT INTO lid_mappings (instance_id, lid, pn) VALUES ($1, '2@lid', '5511900000002@s.whatsapp.net')`, [instanceId]);
        events.push({ eventType: 'messages', payload: {} });
      }),
    ).rejects.toBeInstanceOf(FencedOutError);
    expect(await outbox()).toHaveLength(1);
    expect(await db.dataSource.query(`SELECT lid FROM lid_mappings WHERE instance_id = $1 AND lid = '2@lid'`, [instanceId])).toEqual([]);
  });
});
