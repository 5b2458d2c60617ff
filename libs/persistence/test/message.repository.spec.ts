import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InboundGroupRepository, InstanceRepository, MessageRepository, type MessageRow, type NewMessage } from '@gw/persistence';

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

  describe('upsert', () => {
    it('should insert once and refresh on a repeat', async () => {
      const first = message({ messageId: 'DUP1', text: 'one' });
      const a = await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).upsert(first));
      const b = await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).upsert({ ...first, id: 'rother1', text: 'two' }));
      expect(a.created).toBe(true);
      expect(b.created).toBe(false);
      expect(b.row.id).toBe(first.id);
      expect(b.row.text).toBe('two');
      expect(b.row.sendPayload).toEqual({ text: 'hi' });
    });
  });

  describe('a new message whose record id is taken in the instance (the table gives it a fresh one, ADR 0040)', () => {
    const [a, b] = ['rtakena', 'rtakenb'];
    const fresh = /^r[0-9a-f]{7}$/;
    const idOf = async (instance: string, messageId: string) => (await sut.findOne(instance, messageId))?.id;

    beforeAll(async () => {
      for (const id of [a, b]) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    });

    const writes: Array<[string, string, (message: NewMessage) => Promise<{ row: MessageRow; created: boolean } | null>]> = [
      ['upsert', 'rabcde01', (m) => sut.upsert(m)],
      ['storeCopy', 'rabcde02', (m) => sut.storeCopy(m)],
      ['storeOwnCopy', 'rabcde03', (m) => sut.storeOwnCopy(m)],
    ];
    it.each(writes)('%s: should store it under a fresh id and answer that id, the other instance and a repeat keeping theirs', async (name, taken, write) => {
      await sut.upsert(newMessageFixture(a, { id: taken, messageId: `${name}-HOLDER` }));
      const stored = (await write(newMessageFixture(a, { id: taken, messageId: `${name}-NEW` })))!;
      expect(stored.created).toBe(true);
      expect(stored.row.id).toMatch(fresh);
      expect(stored.row.id).not.toBe(taken);
      expect(await idOf(a, `${name}-NEW`)).toBe(stored.row.id);
      expect(await idOf(a, `${name}-HOLDER`)).toBe(taken);
      // Free in the other instance: kept as given.
      expect((await write(newMessageFixture(b, { id: taken, messageId: `${name}-NEW` })))!.row.id).toBe(taken);
      // The same message again with the taken id (ON CONFLICT on the message id): the stored row keeps its id.
      await sut.upsert(newMessageFixture(a, { id: taken, messageId: `${name}-NEW`, text: 'again' }));
      expect(await idOf(a, `${name}-NEW`)).toBe(stored.row.id);
    });

    it('insertNew: should store a history chunk whose ids are taken (in the table or earlier in the chunk) under fresh ones, and answer them', async () => {
      await sut.insertNew([newMessageFixture(a, { id: 'rtaken01', messageId: 'TAKEN-A' })]);
      const chunk = [
        newMessageFixture(a, { id: 'rtaken01', messageId: 'TAKEN-B' }),
        newMessageFixture(a, { id: 'rfree001', messageId: 'TAKEN-C' }),
        newMessageFixture(a, { id: 'rfree001', messageId: 'TAKEN-D' }),
      ];
      const rows = await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).insertNew(chunk));
      expect(rows.map((row) => row.messageId).sort()).toEqual(['TAKEN-B', 'TAKEN-C', 'TAKEN-D']);
      const byMessage = new Map(rows.map((row) => [row.messageId, row.id]));
      expect(byMessage.get('TAKEN-B')).toMatch(fresh);
      expect(byMessage.get('TAKEN-B')).not.toBe('rtaken01');
      expect(byMessage.get('TAKEN-C')).toBe('rfree001');
      expect(byMessage.get('TAKEN-D')).toMatch(fresh);
      expect(byMessage.get('TAKEN-D')).not.toBe('rfree001');
      for (const [messageId, id] of byMessage) expect(await idOf(a, messageId)).toBe(id);
      expect(await idOf(a, 'TAKEN-A')).toBe('rtaken01');
      const [other] = await sut.insertNew([newMessageFixture(b, { id: 'rtaken01', messageId: 'TAKEN-B' })]);
      expect(other.id).toBe('rtaken01');
    });
  });

  describe('advanceStatus', () => {
    it('should only move forward', async () => {
      const stored = message({ messageId: 'ADV1', status: 'Sent' });
      await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).upsert(stored));
      const read = await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).advanceStatus(instanceId, ['ADV1'], 'Read'));
      expect(read.map((row) => row.status)).toEqual(['Read']);
      const late = await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).advanceStatus(instanceId, ['ADV1'], 'Delivered'));
      expect(late).toEqual([]);
      expect((await sut.findOne(instanceId, 'ADV1'))?.status).toBe('Read');
    });

    it('should never move a failed message', async () => {
      await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).upsert(message({ messageId: 'FAIL1', status: 'Failed' })));
      expect(await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).advanceStatus(instanceId, ['FAIL1'], 'Delivered'))).toEqual(
        [],
      );
    });
  });

  describe('InboundGroupRepository.write (the inbound group statement)', () => {
    it('should store copies as storeOwnCopy does, one statement for all', async () => {
      const other = 'rmsgtest2';
      await new InstanceRepository(db.dataSource).create({ id: other, token: 'tok-msg2', name: 'm2' });
      // Reserved by the send path (no raw yet), Pending; another already has its copy; a third is new.
      await db.dataSource.transaction((m) =>
        new MessageRepository(db.dataSource).within(m).upsert(message({ messageId: 'OWN1', status: 'Pending', fromMe: true })),
      );
      await db.dataSource.transaction((m) =>
        new MessageRepository(db.dataSource).within(m).upsert(message({ messageId: 'OWN2', status: 'Sent', fromMe: true, raw: '{"key":"x"}' })),
      );
      const copies = [
        message({ messageId: 'OWN1', status: 'Delivered', fromMe: true, raw: '{"key":"1"}' }),
        message({ messageId: 'OWN2', status: 'Read', fromMe: true, raw: '{"key":"2"}' }),
        newMessageFixture(other, { messageId: 'OWN1', status: 'Sent', fromMe: true, raw: '{"key":"3"}' }),
      ];
      const stored = (await db.dataSource.transaction((m) => new InboundGroupRepository(db.dataSource).within(m).write({ copies }))).copies;
      expect(
        stored.map(
          (copy) => copy && { id: copy.row.messageId, instance: copy.row.instanceId, status: copy.row.status, created: copy.created, advanced: copy.advanced },
        ),
      ).toEqual([
        { id: 'OWN1', instance: instanceId, status: 'Delivered', created: false, advanced: true },
        null,
        { id: 'OWN1', instance: other, status: 'Sent', created: true, advanced: false },
      ]);
      expect((await sut.findOne(instanceId, 'OWN2'))?.status).toBe('Sent');
      const moved = (
        await db.dataSource.transaction((m) =>
          new InboundGroupRepository(db.dataSource).within(m).write({
            statuses: [
              { instanceId, messageIds: ['OWN1', 'OWN2'], status: 'Read' },
              { instanceId: other, messageIds: ['OWN1'], status: 'Pending' },
            ],
          }),
        )
      ).statuses;
      expect(moved.map((row) => `${row.instanceId} ${row.messageId} ${row.status}`).sort()).toEqual([`${instanceId} OWN1 Read`, `${instanceId} OWN2 Read`]);
    });

    it('should send one prepared text for any number of copies, and store each as storeOwnCopy does', async () => {
      const fields: Partial<NewMessage> = {
        fromMe: true,
        status: 'Delivered',
        raw: '{"key":"p"}',
        content: { text: 'olá', nested: [1, null, 'x'] },
        callPeer: { jid: '5511999990001@s.whatsapp.net', name: 'Ana', imagePreviewUrl: '' },
        aiMetadata: null,
        sendPayload: null,
        messageTimestamp: 1_700_000_000_123,
      };
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      const texts: string[] = [];
      const counting = new Proxy(runner.manager, {
        get: (target, key, receiver) =>
          key === 'query'
            ? (text: string, params?: unknown[]) => {
                texts.push(text);
                return target.query(text, params);
              }
            : Reflect.get(target, key, receiver),
      });
      try {
        // Groups of 1, 3, 1 and 2: the text is hot (seen 3 times) by the third and prepared on this connection.
        for (const [group, size] of [1, 3, 1, 2].entries()) {
          const copies = Array.from({ length: size }, (_, n) => message({ ...fields, messageId: `PREP${group}-${n}` }));
          const { copies: stored } = await new InboundGroupRepository(db.dataSource).within(counting).write({ copies });
          expect(stored.map((copy) => copy?.created)).toEqual(copies.map(() => true));
          // The row the statement answers is the stored row, every column in its own type.
          for (const copy of stored) expect(copy?.row).toEqual(await sut.findOne(instanceId, copy!.row.messageId));
        }
        expect(texts).toHaveLength(4);
        expect(new Set(texts).size).toBe(1);
        const prepared: Array<{ statement: string }> = await runner.query(`SELECT statement FROM pg_prepared_statements`);
        expect(prepared.map((row) => row.statement)).toContain(texts[0]);
      } finally {
        await runner.release();
      }
      // The same copy stored alone by the one-row statement: every field alike.
      await db.dataSource.transaction((m) => new MessageRepository(db.dataSource).within(m).storeOwnCopy(message({ ...fields, messageId: 'PREP-ALONE' })));
      const comparable = (row: MessageRow | null) => row && { ...row, id: '', messageId: '', createdAt: null, updatedAt: null };
      const alone = comparable(await sut.findOne(instanceId, 'PREP-ALONE'));
      expect(alone).toMatchObject({ content: fields.content, callPeer: fields.callPeer, aiMetadata: null, sendPayload: null, raw: '{"key":"p"}' });
      expect(comparable(await sut.findOne(instanceId, 'PREP1-2'))).toEqual(alone);
    });
  });

  describe('find', () => {
    it('should filter by track id, chat and direction, newest first, with a total', async () => {
      const base = Date.now();
      for (let n = 0; n < 3; n++) {
        await db.dataSource.transaction((m) =>
          new MessageRepository(db.dataSource)
            .within(m)
            .upsert(message({ messageId: `TR${n}`, trackId: 'campaign-7', trackSource: 'crm', messageTimestamp: base + n })),
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
