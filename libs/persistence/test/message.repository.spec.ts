import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, MessageRepository, type NewMessage } from '@gw/persistence';

describe(MessageRepository.name, () => {
  let db: TestDatabase;
  let sut: MessageRepository;
  const instanceId = 'rmsgtest';

  const message = (overrides: Partial<NewMessage>): NewMessage => newMessageFixture(instanceId, overrides);

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new MessageRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-msg', name: 'm' });
  });
  afterAll(() => db.close());

  describe('upsertWithin', () => {
    it('should insert once and refresh on a repeat', async () => {
      const first = message({ messageId: 'DUP1', text: 'one' });
      const a = await db.dataSource.transaction((m) => MessageRepository.upsertWithin(m, first));
      const b = await db.dataSource.transaction((m) => MessageRepository.upsertWithin(m, { ...first, id: 'rother1', text: 'two' }));
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(b.row.id).toBe(first.id);
      expect(b.row.text).toBe('two');
      expect(b.row.sendPayload).toEqual({ text: 'hi' });
    });
  });

  describe('advanceStatusWithin', () => {
    it('should only move forward', async () => {
      const stored = message({ messageId: 'ADV1', status: 'Sent' });
      await db.dataSource.transaction((m) => MessageRepository.upsertWithin(m, stored));
      const read = await db.dataSource.transaction((m) => MessageRepository.advanceStatusWithin(m, instanceId, ['ADV1'], 'Read'));
      expect(read.map((row) => row.status)).toEqual(['Read']);
      const late = await db.dataSource.transaction((m) => MessageRepository.advanceStatusWithin(m, instanceId, ['ADV1'], 'Delivered'));
      expect(late).toEqual([]);
      expect((await sut.findOne(instanceId, 'ADV1'))?.status).toBe('Read');
    });

    it('should never move a failed message', async () => {
      await db.dataSource.transaction((m) => MessageRepository.upsertWithin(m, message({ messageId: 'FAIL1', status: 'Failed' })));
      expect(await db.dataSource.transaction((m) => MessageRepository.advanceStatusWithin(m, instanceId, ['FAIL1'], 'Delivered'))).toEqual([]);
    });
  });

  describe('find', () => {
    it('should filter by track id, chat and direction, newest first, with a total', async () => {
      const base = Date.now();
      for (let n = 0; n < 3; n++) {
        await db.dataSource.transaction((m) =>
          MessageRepository.upsertWithin(m, message({ messageId: `TR${n}`, trackId: 'campaign-7', trackSource: 'crm', messageTimestamp: base + n })),
        );
      }
      const { rows, total } = await sut.find(instanceId, { trackId: 'campaign-7', limit: 2, offset: 0 });
      expect(total).toBe(3);
      expect(rows.map((row) => row.messageId)).toEqual(['TR2', 'TR1']);
      expect((await sut.find(instanceId, { id: 'TR0', limit: 10, offset: 0 })).rows).toHaveLength(1);
      expect((await sut.find(instanceId, { fromMe: false, limit: 10, offset: 0 })).total).toBe(0);
    });
  });
});
