import type { QueryRunner } from 'typeorm';
import { nextPhone, sleep, waitFor } from './support/stack';
import { TakeoverStack } from './support/takeover-stack';

/**
 * A worker is killed (-9) with received messages decrypted and not yet stored (ADR 0035). Their
 * delivery receipts wait for the write, so the phone shows them sent, not delivered, and WhatsApp
 * delivers them again to the worker that takes the instance over; their Signal keys are spent (the
 * dead worker had stored the sessions they moved), so the heir decrypts them from the plaintexts kept
 * in the same key transactions. Each message is stored once, announced once and receipted; before,
 * Baileys receipted each message before it was written and these were lost (bench/cluster, kill -9:
 * 52 of 1,430).
 */
describe('received messages when the holding worker dies before storing them', () => {
  const stack = new TakeoverStack('e2e');
  let locker: QueryRunner | undefined;

  let attempt = 0;

  beforeAll(async () => {
    await stack.start([]);
  });

  afterAll(async () => {
    await locker?.rollbackTransaction().catch(() => undefined);
    await locker?.release().catch(() => undefined);
    await stack.stop();
  });

  const stored = (instanceId: string): Promise<Array<{ message_id: string; text: string }>> =>
    stack.db.dataSource.query(`SELECT message_id, text FROM messages WHERE instance_id = $1 AND from_me = false ORDER BY message_timestamp`, [instanceId]);
  const plaintexts = async (instanceId: string): Promise<number> =>
    Number(
      (
        (await stack.db.dataSource.query(`SELECT count(*) AS n FROM auth_keys WHERE instance_id = $1 AND type = 'received-plaintext'`, [instanceId])) as Array<{
          n: string;
        }>
      )[0].n,
    );
  /** Of `ids`, the messages WhatsApp still holds for our device (pushed, not receipted: delivered again at its next login). */
  const unreceipted = async (device: string, ids: string[]): Promise<string[]> =>
    (await stack.control<{ unreceiptedMessages: string[] }>('GET', `/sim/devices/${encodeURIComponent(device)}`)).unreceiptedMessages.filter((id) =>
      ids.includes(id),
    );

  it('should store, announce and receipt each of them once, through the heir', async () => {
    // Workers of their own per attempt (a retried attempt starts over with a new instance).
    attempt += 1;
    for (const workerId of [...stack.workers.keys()]) stack.halt(workerId);
    const [holder, heir] = [`holder-${attempt}`, `heir-${attempt}`];
    await stack.startWorker(holder, { ownPool: true });
    const phone = nextPhone('5531');
    const peer = nextPhone('5532');
    await stack.control('POST', '/sim/accounts', { phone: peer });
    const { id, device } = await stack.linkedInstance('inbound-holder-dies', phone);
    expect(await stack.holderOf(id)).toBe(holder);

    // The Signal session exists and is stored: what follows are ordinary messages.
    const before = ['before 1', 'before 2'];
    for (const text of before) await stack.control('POST', `/sim/accounts/${peer}/send`, { to: phone, text });
    await waitFor(
      () => stored(id),
      (rows) => rows.length === 2,
      15_000,
      'the first two stored',
    );

    // The store stalls (the messages table locked): worker-a decrypts and stores the sessions, not the messages.
    locker = stack.db.dataSource.createQueryRunner();
    await locker.connect();
    await locker.startTransaction();
    await locker.query('LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE');
    const during = ['during 1', 'during 2', 'during 3', 'during 4', 'during 5'];
    const sentIds: string[] = [];
    for (const text of during) {
      const sent = await stack.control<{ id: string }>('POST', `/sim/accounts/${peer}/send`, { to: phone, text });
      sentIds.push(sent.id);
    }
    await waitFor(
      () => plaintexts(id),
      (n) => n === during.length,
      15_000,
      'each decrypted message kept with its session',
    );
    await sleep(500);
    // Decrypted, not stored: no receipt from our device yet, so WhatsApp still holds them for it.
    expect((await unreceipted(device.jid, sentIds)).sort()).toEqual([...sentIds].sort());

    // kill -9 while the writes wait; the lock goes only once nothing of the holder can commit.
    await stack.kill(holder);
    await locker.rollbackTransaction();
    await locker.release();
    locker = undefined;
    // The heir: it adopts the instance once the holder's lease lapses.
    await stack.startWorker(heir);

    const rows = await waitFor(
      () => stored(id),
      (list) => list.length >= before.length + during.length,
      45_000,
      'every message stored by the heir',
    );
    expect(await stack.holderOf(id)).toBe(heir);
    expect(rows.map((row) => row.text).sort()).toEqual([...before, ...during].sort());
    // Announced once each.
    const events: Array<{ message_id: string; n: string }> = await stack.db.dataSource.query(
      `SELECT payload->'message'->>'messageid' AS message_id, count(*) AS n FROM outbox_events
        WHERE instance_id = $1 AND event_type = 'messages' GROUP BY 1`,
      [id],
    );
    for (const sentId of sentIds) expect(events.find((event) => event.message_id === sentId)?.n).toBe('1');
    // Receipted now, and the kept plaintexts deleted.
    await waitFor(
      () => unreceipted(device.jid, sentIds),
      (ids) => ids.length === 0,
      15_000,
      'each receipted by our device',
    );
    await waitFor(
      () => plaintexts(id),
      (n) => n === 0,
      // Deleted once their receipts have been out RECEIPT_SETTLE_MS (3 s) with the socket open, batched.
      20_000,
      'the plaintexts of stored messages deleted',
    );
  }, 120_000);
});
