import { LeaseRepository } from '@gw/persistence';
import { quietLibsignalConsole } from '@gw/wa-sim';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(90_000);
quietLibsignalConsole();

/**
 * Issue #34, ADR 0034: the lease moves while the worker is still receiving (it learns of it only at its
 * next renewal, or when WhatsApp replaces its socket with the heir's). What Baileys decrypted meanwhile
 * was already acknowledged to WhatsApp, which will not give it to the heir: those fenced writes are
 * refused, and each such message is still stored (without the fence, by its id); what this worker did
 * not acknowledge goes to the heir. Either way every message is stored once, with its `messages` event
 * once. Before, the refused writes were dropped.
 */
describe('received messages whose lease moved while they were written', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'lease-moved';
  let worker: SessionWorker;
  let me: SimAccount;
  let ana: SimAccount;

  beforeAll(async () => {
    await harness.start();
    // A long lease and no adoption of its own: the worker learns of the move late, and never takes it back.
    worker = await harness.startWorker('w-moved', { leaseTtlMs: 30_000, reconcileIntervalMs: 600_000 });
    me = await fixture.account(nextPhone(), 'Loja');
    ana = await fixture.account(nextPhone(), 'Ana');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
    await fixture.settled(instanceId, ana.phone, me.phone);
    // The heir: adopts the instance as soon as its lease lapses.
    await harness.startWorker('w-heir', { leaseTtlMs: 30_000 });
  }, 120_000);
  afterAll(() => harness.stop());

  it('stores every message received around the move once, evented once', async () => {
    const leases = new LeaseRepository(harness.db.dataSource);
    await worker.keeper.renewNow();
    expect((await leases.holderOf(instanceId))?.workerId).toBe('w-moved');

    const ids: string[] = [];
    for (let n = 0; n < 12; n++) {
      ids.push(await fixture.send(ana.phone, me.phone, { text: `around the move ${n}` }));
      // After the second message the lease lapses (as when this worker was late): the heir adopts it.
      if (n === 1) await harness.db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [instanceId]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await waitFor(
      () => leases.holderOf(instanceId),
      (lease) => lease?.workerId === 'w-heir',
      20_000,
      'the heir holding the instance',
    );

    const rows = await waitFor(
      () => fixture.rows(instanceId, `message_id = ANY($2::text[])`, [ids]),
      (found) => found.length === ids.length,
      40_000,
      'every message stored',
    ).catch(() => fixture.rows(instanceId, `message_id = ANY($2::text[])`, [ids]));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const events = (await fixture.events(instanceId, 'messages'))
      .map((event) => (event.payload.message as { messageid: string }).messageid)
      .filter((id) => ids.includes(id));
    const counts = ids.map((id) => ({ stored: rows.filter((row) => row.messageId === id).length, evented: events.filter((one) => one === id).length }));
    process.stdout.write(
      `lease moved: ${ids.length} received, ${counts.filter((c) => c.stored === 1 && c.evented === 1).length} stored and evented once, ` +
        `${counts.filter((c) => c.stored === 0).length} lost, ${counts.filter((c) => c.evented > 1).length} evented twice\n`,
    );
    expect(counts).toEqual(ids.map(() => ({ stored: 1, evented: 1 })));
    expect(rows.map((row) => row.text).sort()).toEqual(ids.map((_, n) => `around the move ${n}`).sort());
  });
});
