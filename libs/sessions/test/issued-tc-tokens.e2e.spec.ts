import { BufferJSON } from '@whiskeysockets/baileys';
import { quietLibsignalConsole } from '@gw/wa-sim';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, sleep, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(30_000);
quietLibsignalConsole();

/**
 * Baileys 7.0.0-rc14 issues our privacy token to a contact after a send and means to store that it did;
 * its write is lost (see src/socket/issued-tc-tokens.ts), so without IssuedTcTokenObserver every send
 * issued the token again: three sends, three issuances.
 */
describe('Privacy tokens issued to a contact', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'tctokens';
  let worker: SessionWorker;
  let me: SimAccount;
  let bea: SimAccount;
  let deviceJid: string;
  /** When bea wrote first (beforeAll's settle), in seconds. */
  let firstWriteAt = 0;

  const issues = async () => (await harness.control<{ privacyTokenIssues: number }>('GET', `/sim/devices/${encodeURIComponent(deviceJid)}`)).privacyTokenIssues;
  const storedTokens = async () =>
    (
      await harness.db.dataSource.query<Array<{ key_id: string; value: string }>>(
        `SELECT key_id, value FROM auth_keys WHERE instance_id = $1 AND type = 'tctoken' ORDER BY key_id`,
        [instanceId],
      )
    ).map((row) => ({ id: row.key_id, value: JSON.parse(row.value, BufferJSON.reviver) as Record<string, unknown> }));

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-tctokens', { leaseTtlMs: 20_000 });
    me = await fixture.account(nextPhone(), 'Loja');
    bea = await fixture.account(nextPhone(), 'Bea');
    await harness.newInstance(instanceId);
    deviceJid = await harness.pairByQr(instanceId, me.phone);
    firstWriteAt = Math.floor(Date.now() / 1000);
    await fixture.settled(instanceId, bea.phone, me.phone);
  }, 90_000);
  afterAll(() => harness.stop());

  it('should issue the token once for several sends to one contact, and keep the issue time under the contact LID', async () => {
    const before = await issues();
    const socket = fixture.socket(worker, instanceId);
    const sentAt = Math.floor(Date.now() / 1000);
    for (const text of ['um', 'dois', 'três']) {
      const sent = await socket.sendMessage(bea.jid, { text });
      // Acked by the server (the contact's phone may have sent its delivery receipt already).
      await fixture.waitMessage(instanceId, sent!.key.id!, (row) => ['Sent', 'Delivered', 'Read'].includes(row.status));
      // The issuance is fire-and-forget after the send: give it the time to be answered and stored.
      await waitFor(storedTokens, (rows) => rows.some((row) => row.id === bea.lid && row.value.senderTimestamp !== undefined), 5_000, 'the stored token');
    }
    // The server counts the issuance when it has handled the IQ, which may come after the token's row on a
    // loaded machine (CI once read 0 here): wait for the first, then make sure no second one follows.
    await waitFor(issues, (n) => n - before >= 1, 10_000, 'the issuance at the server');
    await sleep(300);
    expect((await issues()) - before).toBe(1);

    const byId = new Map((await storedTokens()).map((row) => [row.id, row.value]));
    const entry = byId.get(bea.lid)!;
    expect(entry.senderTimestamp).toBeGreaterThanOrEqual(sentAt);
    // The token bea issued us when it wrote first (its privacy_token notification, in beforeAll), with its
    // time: not before that first message (CI once saw it a second before the sends began, rightly).
    expect(Buffer.isBuffer(entry.token) && (entry.token as Buffer).length).toBeGreaterThan(0);
    expect(Number(entry.timestamp)).toBeGreaterThanOrEqual(firstWriteAt);
    // The index Baileys prunes expired tokens by names the contact.
    const index = byId.get('__index')!;
    expect(JSON.parse((index.token as Buffer).toString())).toContain(bea.lid);
  });
});
