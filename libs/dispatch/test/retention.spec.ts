import { FileRepository, InstanceRepository, MessageRepository, OutboxRepository, RetentionRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { RetentionJob } from '../src/retention';

describe(RetentionJob.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: 'rret', token: 'tok-ret', name: 'ret' });
  });
  afterAll(() => db.close());

  it('should purge what is past the retention and keep the rest', async () => {
    const insert = (messageId: string, daysOld: number) =>
      db.dataSource.query(
        `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, created_at) VALUES ('rret', $1, $2, 'c', 1, now() - ($3 || ' days')::interval)`,
        [`r${messageId}`, messageId, String(daysOld)],
      );
    await insert('OLD', 8);
    await insert('NEW', 1);
    await db.dataSource.transaction((manager) => OutboxRepository.insertWithin(manager, 'rret', [{ eventType: 'presence', payload: {} }]));
    await db.dataSource.query(`UPDATE outbox_events SET dispatched_at = now(), created_at = now() - interval '9 days'`);
    await db.dataSource.query(`INSERT INTO stored_files (id, instance_id, data, expires_at) VALUES ('f1', 'rret', '\\x00', now() - interval '1 minute')`);

    const sut = new RetentionJob(
      new RetentionRepository(db.dataSource),
      new MessageRepository(db.dataSource),
      new FileRepository(db.dataSource),
      { retentionDays: 7, intervalMs: 60_000 },
      createLogger('t', 'silent'),
    );
    const removed = await sut.runOnce();

    expect(removed).toMatchObject({ messages: 1, files: 1, events: 1 });
    const messages = new MessageRepository(db.dataSource);
    expect(await messages.findOne('rret', 'OLD')).toBeNull();
    expect(await messages.findOne('rret', 'NEW')).not.toBeNull();
  });
});
