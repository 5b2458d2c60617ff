import { FileRepository, InstanceRepository, MessageRepository, OutboxRepository, RetentionRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { RECEIVED_PLAINTEXT_RETENTION_DAYS, RetentionJob, type RetentionConfig } from '../src/retention';

describe(RetentionJob.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: 'rret', token: 'tok-ret', name: 'ret' });
  });
  afterAll(() => db.close());

  /** The job over the test schema: messages kept 7 days, unless `config` says otherwise. */
  const retentionJob = (config: Partial<RetentionConfig> = {}) =>
    new RetentionJob(
      new RetentionRepository(db.dataSource),
      new MessageRepository(db.dataSource),
      new FileRepository(db.dataSource),
      { retentionDays: 7, intervalMs: 60_000, ...config },
      createLogger('t', 'silent'),
    );

  it('should purge what is past the retention and keep the rest', async () => {
    const insert = (messageId: string, daysOld: number) =>
      db.dataSource.query(
        `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, created_at) VALUES ('rret', $1, $2, 'c', 1, now() - ($3 || ' days')::interval)`,
        [`r${messageId}`, messageId, String(daysOld)],
      );
    await insert('OLD', 8);
    await insert('NEW', 1);
    await db.dataSource.transaction((manager) => new OutboxRepository(db.dataSource).within(manager).insert('rret', [{ eventType: 'presence', payload: {} }]));
    await db.dataSource.query(`UPDATE outbox_events SET dispatched_at = now(), created_at = now() - interval '9 days'`);
    await db.dataSource.query(`INSERT INTO stored_files (id, instance_id, data, expires_at) VALUES ('f1', 'rret', '\\x00', now() - interval '1 minute')`);

    const sut = retentionJob();
    const removed = await sut.runOnce();

    expect(removed).toMatchObject({ messages: 1, files: 1, events: 1 });
    const messages = new MessageRepository(db.dataSource);
    expect(await messages.findOne('rret', 'OLD')).toBeNull();
    expect(await messages.findOne('rret', 'NEW')).not.toBeNull();
  });

  it('should purge the received plaintexts a closed socket kept once WhatsApp no longer delivers them again, and no other Signal key', async () => {
    const key = (type: string, keyId: string, daysOld: number) =>
      db.dataSource.query(
        `INSERT INTO auth_keys (instance_id, type, key_id, value, written_at) VALUES ('rret', $1, $2, 'v', now() - ($3 || ' days')::interval)`,
        [type, keyId, String(daysOld)],
      );
    await key('received-plaintext', 'kept-long-ago', RECEIVED_PLAINTEXT_RETENTION_DAYS + 1);
    await key('received-plaintext', 'kept-lately', RECEIVED_PLAINTEXT_RETENTION_DAYS - 1);
    // The Signal state itself is never aged out, however old.
    await key('session', 'an-old-session', 400);
    await key('pre-key', '7', 400);
    const sut = retentionJob();

    const removed = await sut.runOnce();

    expect(removed).toMatchObject({ plaintexts: 1 });
    const left: Array<{ type: string; key_id: string }> = await db.dataSource.query(
      `SELECT type, key_id FROM auth_keys WHERE instance_id = 'rret' ORDER BY type, key_id`,
    );
    expect(left).toEqual([
      { type: 'pre-key', key_id: '7' },
      { type: 'received-plaintext', key_id: 'kept-lately' },
      { type: 'session', key_id: 'an-old-session' },
    ]);
  });

  it('should purge the delivery log by its own retention, counting a replayed delivery from its replay', async () => {
    await db.dataSource.query(
      `INSERT INTO webhooks (id, instance_id, url, enabled, events, exclude_messages, secret) VALUES ('hret', 'rret', 'http://127.0.0.1:9/h', true, '{}', '{}', 'whsec_r')`,
    );
    const delivery = (eventId: number, daysOld: number, replayedDaysAgo: number | null) =>
      db.dataSource.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, event_type, status, created_at, replayed_at)
         VALUES ('hret', $1, 'rret', 'messages', 'delivered', now() - ($2 || ' days')::interval, now() - ($3 || ' days')::interval)`,
        [eventId, String(daysOld), replayedDaysAgo === null ? null : String(replayedDaysAgo)],
      );
    await delivery(9_001, 10, null);
    await delivery(9_002, 5, null);
    await delivery(9_003, 10, 1);
    await delivery(9_004, 1, null);
    const sut = retentionJob({ deliveryLogRetentionDays: 3 });
    const removed = await sut.runOnce();

    expect(removed).toMatchObject({ deliveries: 2 });
    const left = await db.dataSource.query(`SELECT event_id FROM webhook_deliveries WHERE webhook_id = 'hret' ORDER BY event_id`);
    expect(left.map((row: { event_id: string }) => Number(row.event_id))).toEqual([9_003, 9_004]);
  });

  it("keeps the events a consumer's cursor has not passed, and those of a transaction it still waits for", async () => {
    await new InstanceRepository(db.dataSource).create({ id: 'rcur', token: 'tok-cur', name: 'cur' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await db.dataSource.transaction((manager) =>
          new OutboxRepository(db.dataSource).within(manager).insert('rcur', [{ eventType: 'presence', payload: {} }]),
        )) as string,
      );
    }
    // Passed (tx 10), pending (tx 11: the cursor moved past it while it ran), not reached yet (tx 30).
    await db.dataSource.query(
      `UPDATE outbox_events SET dispatched_at = now(), created_at = now() - interval '9 days',
         tx = CASE id WHEN $1 THEN 10 WHEN $2 THEN 11 ELSE 30 END WHERE instance_id = 'rcur'`,
      [ids[0], ids[1]],
    );
    await db.dataSource.query(`INSERT INTO outbox_cursors (consumer, instance_id, tx, id, pending) VALUES ('bot', 'rcur', 20, 0, '{11}')`);

    const purged = await new RetentionRepository(db.dataSource).whileLocked((purge) => purge.events(new Date(Date.now() - 7 * 86_400_000)));

    expect(purged).toBe(1);
    const left = await db.dataSource.query(`SELECT id::text AS id FROM outbox_events WHERE instance_id = 'rcur' ORDER BY id`);
    expect(left.map((row: { id: string }) => row.id)).toEqual([ids[1], ids[2]]);
  });
});
