import type { SendRequest } from '@gw/contracts';
import { InstanceRepository, LeaseRepository, MessageRepository, OutboundLedgerRepository, type Lease } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { SendLedger } from '../src/outbound/send-ledger';

/**
 * The send ledger's reserves (and results) of every instance of a worker go in grouped statements, one in
 * flight (ADR 0012). One of them may wait for a row: an instance being deleted holds its rows while the
 * cascade runs. The other instances' sends must not wait with it (GroupCommit's `slow`).
 */
describe('SendLedger with an instance whose rows are locked', () => {
  let db: TestDatabase;
  let leases: LeaseRepository;
  let ledger: SendLedger;
  const own = new Map<string, Lease>();

  const request = (instanceId: string, messageId: string): SendRequest => ({
    instanceId,
    recordId: `r${messageId.slice(-7).toLowerCase()}`,
    messageId,
    chatJid: '5511977770000@s.whatsapp.net',
    content: { kind: 'text', text: 'hello', linkPreview: null },
    record: { sendFunction: '/send/text', sendPayload: { number: '5511977770000', text: 'hello' }, trackSource: '', trackId: '', sendFolderId: '' },
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    leases = new LeaseRepository(db.dataSource);
    ledger = new SendLedger(new MessageRepository(db.dataSource), new OutboundLedgerRepository(db.dataSource));
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ['i-ledger-locked', 'i-ledger-free']) {
      await instances.create({ id, token: `token-${id}`, name: id });
      own.set(id, (await leases.claim(id, 'w-ledger', 60_000))!);
    }
  });
  afterAll(async () => {
    await leases.closeRenewal();
    await db.close();
  });

  it("should reserve and settle another instance's send while one instance's reserve waits for its locked rows", async () => {
    const holder = db.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      // What a delete of the instance holds until it commits.
      await holder.query(`SELECT 1 FROM instances WHERE id = 'i-ledger-locked' FOR UPDATE`);
      await holder.query(`SELECT 1 FROM session_leases WHERE instance_id = 'i-ledger-locked' FOR UPDATE`);
      let lockedDone = false;
      const waiting = ledger.reserve(own.get('i-ledger-locked')!, request('i-ledger-locked', '3EB0AAAA0001'), 'owner', true).then((answer) => {
        lockedDone = true;
        return answer;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const free = request('i-ledger-free', '3EB0BBBB0001');
      await expect(ledger.reserve(own.get('i-ledger-free')!, free, 'owner', true)).resolves.toEqual({ alreadyRelayed: null });
      await expect(ledger.result(own.get('i-ledger-free')!, free, { status: 'Sent' })).resolves.toMatchObject({ status: 'Sent' });
      expect(lockedDone).toBe(false);
      await holder.commitTransaction();
      await expect(waiting).resolves.toEqual({ alreadyRelayed: null });
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });
});
