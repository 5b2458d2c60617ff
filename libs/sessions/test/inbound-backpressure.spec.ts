import { quietLibsignalConsole } from '@gw/wa-sim';
import type { QueryRunner } from 'typeorm';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(60_000);
quietLibsignalConsole();

describe('Inbound backpressure: a socket whose queue is full is not read until it drains', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'backpressure';
  const SOCKET_MAX = 8;
  let worker: SessionWorker;
  let me: SimAccount;
  let ana: SimAccount;

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-backpressure', { leaseTtlMs: 20_000, inboundQueueMax: SOCKET_MAX });
    me = await fixture.account(nextPhone(), 'Loja');
    ana = await fixture.account(nextPhone(), 'Ana');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
    await fixture.settled(instanceId, ana.phone, me.phone);
  }, 90_000);
  afterAll(() => harness.stop());

  it('should stop reading a socket while its queue is full, read nothing more until it drains, and then store every message once, in order', async () => {
    // Pairing's last events (contacts, chats, the settled round trip) may still be queued on a busy machine.
    const before = await waitFor(
      () => worker.inbound.backlog(),
      (backlog) => backlog.depth === 0,
      10_000,
      'the queue empty after pairing',
    );
    // The store stalls: every inbound transaction waits at its outbox insert until this lock goes.
    const lock: QueryRunner = harness.db.dataSource.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE outbox_events IN SHARE ROW EXCLUSIVE MODE');
    let deepest = 0;
    const sampler = setInterval(() => (deepest = Math.max(deepest, worker.inbound.backlog().depth)), 2);
    const ids: string[] = [];
    const flood = async (count: number) => {
      for (let i = 0; i < count; i++) ids.push(await fixture.send(ana.phone, me.phone, { text: `flood ${ids.length}` }));
    };
    let paused: number;
    try {
      await flood(60);
      // The decrypts wait once the queue holds half of SOCKET_MAX (ADR 0048); Baileys then holds at most
      // SOCKET_MAX stanzas, and the reader at most SOCKET_MAX frames before it stops reading the TCP socket.
      // (A flood of events no decrypt makes, receipts, fills the queue itself to SOCKET_MAX and pauses it.)
      await waitFor(
        () => worker.inbound.backlog(),
        (backlog) => backlog.decryptsWaiting === 1 || (backlog.pauses > before.pauses && backlog.pausedSockets === 1),
        10_000,
        'the decrypts waiting, or the socket paused',
      );
      await waitFor(
        async () => {
          const depth = worker.inbound.backlog().depth;
          await new Promise((resolve) => setTimeout(resolve, 200));
          return depth === worker.inbound.backlog().depth;
        },
        (steady) => steady,
        10_000,
        'what was read queued',
      );
      paused = worker.inbound.backlog().depth;
      // A second flood while paused is not handed to Baileys at all (held, then left to WhatsApp's side).
      await flood(60);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(worker.inbound.backlog().depth).toBe(paused);
      expect(worker.inbound.backlog().decryptsWaiting + worker.inbound.backlog().pausedSockets).toBeGreaterThanOrEqual(1);
      expect(await fixture.rows(instanceId, `message_id = ANY($2::text[])`, [ids])).toEqual([]);
    } finally {
      await lock.rollbackTransaction();
      await lock.release();
    }
    // It drains, reads again, and every message of both floods is stored and announced once, in the phone's order.
    await waitFor(
      async () => (await fixture.rows(instanceId, `message_id = ANY($2::text[])`, [ids])).length,
      (count) => count === ids.length,
      30_000,
      'every flooded message stored',
    );
    clearInterval(sampler);
    const announced = (await fixture.events(instanceId, 'messages'))
      .map((event) => (event.payload.message as { messageid: string }).messageid)
      .filter((id) => ids.includes(id));
    expect(announced).toEqual(ids);
    await waitFor(
      () => worker.inbound.backlog(),
      (backlog) => backlog.depth === 0 && backlog.pausedSockets === 0 && backlog.decryptsWaiting === 0,
      10_000,
      'the queue empty and the socket read again',
    );
    // Bounded by the setting, not by the flood (120 messages are 240–360 events): past the bound only what
    // Baileys was decrypting when the queue filled, and what one read hands it when reading resumes (each
    // message is 2–3 events: upsert, contact, chat). On a machine at load 18 the deepest point was 66–76;
    // without the pause it is the whole flood.
    expect(paused).toBeGreaterThanOrEqual(SOCKET_MAX / 2);
    expect(deepest).toBeLessThan(SOCKET_MAX * 16);
  });
});
