import type { AsyncDispatcher } from '@gw/dispatch';
import { nextPhone, Stack, waitFor, type InboxEntry } from './support/stack';

const textOf = (entry: InboxEntry): string => entry.message?.extendedTextMessage?.text ?? entry.message?.conversation ?? '';

/**
 * Issue 34: an accepted send ends delivered once or Failed with a reason, never stuck Pending, when
 * the connection to WhatsApp dies while sends are in flight (the server restarts) or the server takes
 * a message and never acks it. Counted at the receiving phone: every accepted id there exactly once.
 */
describe('sends when the connection dies mid-send (issue 34)', () => {
  const stack = new Stack();
  let dispatcher: AsyncDispatcher;
  let token: string;
  let instanceId: string;
  let phone: string;
  let contact: string;

  const rows = async (ids: string[]) =>
    (await stack.db.dataSource.query(`SELECT message_id, status, error FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[])`, [
      instanceId,
      ids,
    ])) as Array<{ message_id: string; status: string; error: string }>;
  const settled = (status: string) => status !== 'Pending' && status !== 'Queued' && status !== '';

  beforeAll(async () => {
    // A send waits 1 s (production: 15 s) for a new socket, so a reconnect longer than that is quick to play.
    await stack.start({}, undefined, {
      sendAckTimeoutMs: 3_000,
      sendReconnectWaitMs: 1_000,
      unackedResendAfterMs: 4_000,
      unackedGiveUpMs: 20_000,
      unackedSweepMs: 500,
    });
    ({ token, id: instanceId, phone } = await stack.connectedInstance('survivor'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    dispatcher = stack.asyncDispatcher();
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await stack.stop();
  });

  afterEach(async () => {
    await stack.control('POST', '/sim/faults', { kind: 'clear' });
  });

  const connected = () =>
    waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      30_000,
      'connected again',
    );

  it('should deliver every accepted async send exactly once across a server restart in the middle of the sends', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 40; n++) {
      const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: `restart ${n}`, async: true } });
      expect(status).toBe(200);
      ids.push(body.messageid);
    }
    // The server goes away while the queue is being sent.
    await waitFor(
      () => stack.inbox(contact, 200),
      (entries) => entries.filter((entry) => ids.includes(entry.id)).length >= 3,
      20_000,
      'the first sends at the phone',
    );
    await stack.control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
    await connected();

    const final = await waitFor(
      () => rows(ids),
      (list) => list.length === ids.length && list.every((row) => settled(row.status)),
      90_000,
      'every send settled',
    );
    const inbox = await stack.inbox(contact, 1_000);
    const arrivals = inbox.filter((entry) => ids.includes(entry.id));
    // A copy under another id would be a duplicate the phone shows: count the texts too.
    const texts = inbox.filter((entry) => /^restart \d+$/.test(textOf(entry)));
    expect(texts).toHaveLength(arrivals.length);
    const failed = final.filter((row) => row.status === 'Failed');
    // Delivered once or failed with a reason: nothing lost, nothing twice.
    expect(failed.filter((row) => !row.error)).toEqual([]);
    expect(new Set(arrivals.map((entry) => entry.id)).size).toBe(arrivals.length);
    expect(arrivals.length + failed.length).toBe(ids.length);
    expect(failed).toEqual([]);
    const queue = await stack.gw.call('GET', '/message/async', { token });
    expect(queue.body.queue).toMatchObject({ pending: 0 });
  }, 150_000);

  it('should deliver every async send exactly once when connections die with a message in flight', async () => {
    await connected();
    // The first three message stanzas each die with their connection: neither routed nor acked.
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'lost', device: phone, count: 3 });
    const ids: string[] = [];
    for (let n = 0; n < 12; n++)
      ids.push((await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: `lost ${n}`, async: true } })).body.messageid);
    const final = await waitFor(
      () => rows(ids),
      (list) => list.length === ids.length && list.every((row) => settled(row.status)),
      90_000,
      'every send settled',
    );
    expect(final.filter((row) => row.status === 'Failed')).toEqual([]);
    const inbox = await stack.inbox(contact, 1_000);
    expect(
      inbox
        .filter((entry) => ids.includes(entry.id))
        .map((entry) => entry.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(inbox.filter((entry) => /^lost \d+$/.test(textOf(entry)))).toHaveLength(ids.length);
  }, 120_000);

  it('should send a sync send again, with the same id, when its connection died before the ack, and end Sent', async () => {
    await connected();
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'lost', device: phone, count: 1 });
    const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'sem ack' } });
    expect(status).toBe(200);
    const [row] = await waitFor(
      () => rows([body.messageid]),
      (list) => list.length === 1 && settled(list[0].status),
      30_000,
      'the unacked send settled',
    );
    expect(['Sent', 'Delivered', 'Read']).toContain(row.status);
    expect(body.status === 'Pending' || ['Sent', 'Delivered', 'Read'].includes(body.status)).toBe(true);
    const arrivals = (await stack.inbox(contact, 1_000)).filter((entry) => entry.id === body.messageid);
    expect(arrivals).toHaveLength(1);
  }, 60_000);

  const updateEvents = async (messageId: string) =>
    (
      (await stack.db.dataSource.query(
        `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages_update' ORDER BY id DESC LIMIT 50`,
        [instanceId],
      )) as Array<{ payload: Record<string, unknown> }>
    )
      .map((event) => JSON.stringify(event.payload))
      .filter((payload) => payload.includes(messageId));

  // docs/guarantees.md, "a sync send whose connection stays down longer than it waits".
  it('should fail a sync send visibly and never send it when the connection goes before it went out and stays down longer than the send waits', async () => {
    await connected();
    // The typing delay holds the send before it goes out; the server goes away meanwhile, for longer than the 1 s wait.
    const sending = stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'fora do ar', delay: 1_500 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stack.control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
    const { status, body } = await sending;
    expect(status).toBe(502);
    expect(body.error).toMatch(/connection to WhatsApp was lost before the message was sent and was not back within 1 s: not sent/);
    const [row] = await rows([body.messageid]);
    expect(row).toMatchObject({ status: 'Failed' });
    expect(row.error).toMatch(/not sent/);
    // Announced like every Failed send: exactly one messages_update, Failed with the reason (written with the status).
    const failed = (await updateEvents(body.messageid)).map((payload) => JSON.parse(payload) as Record<string, any>);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: 'Failed', state: 'Failed', event: { MessageIDs: [body.messageid], IsFromMe: 'True', Type: 'Failed' } });
    expect(failed[0].error).toBe(row.error);
    // Back, and a while later: never sent, still Failed.
    await connected();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await stack.inbox(contact, 1_000)).filter((entry) => textOf(entry) === 'fora do ar')).toEqual([]);
    expect((await rows([body.messageid]))[0]).toMatchObject({ status: 'Failed' });
  }, 60_000);

  it('should keep a sync send that went out Pending, never Failed, when its connection goes before the ack and stays down longer than the send waits, and deliver it once', async () => {
    await connected();
    // Routed to the phone, its ack held back; the server goes away before the ack, for longer than the 1 s wait.
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'drop', device: phone, count: 1 });
    const sending = stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'saiu sem ack' } });
    await waitFor(
      () => stack.inbox(contact, 200),
      (entries) => entries.some((entry) => textOf(entry) === 'saiu sem ack'),
      10_000,
      'the message at the phone',
    );
    await stack.control('POST', '/sim/faults', { kind: 'restart', downMs: 3_000 });
    const { status, body } = await sending;
    expect(status).toBe(200);
    expect(body.status).toBe('Pending');
    await connected();
    const [row] = await waitFor(
      () => rows([body.messageid]),
      (list) => list.length === 1 && settled(list[0].status),
      30_000,
      'the send settled',
    );
    expect(['Sent', 'Delivered', 'Read']).toContain(row.status);
    expect((await updateEvents(body.messageid)).some((payload) => payload.includes('Failed'))).toBe(false);
    expect((await stack.inbox(contact, 1_000)).filter((entry) => textOf(entry) === 'saiu sem ack')).toHaveLength(1);
  }, 60_000);

  it('should announce a sync send WhatsApp refuses (error ack) with exactly one Failed messages_update', async () => {
    await connected();
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '479', device: phone, count: 1 });
    const { body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'recusada' } });
    const [row] = await waitFor(
      () => rows([body.messageid]),
      (list) => list.length === 1 && settled(list[0].status),
      20_000,
      'the refused send settled',
    );
    expect(row.status).toBe('Failed');
    // Both the send and Baileys' error update write Failed; only the one that moved it announces it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const failed = (await updateEvents(body.messageid)).map((payload) => JSON.parse(payload) as Record<string, any>);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: 'Failed', state: 'Failed', event: { MessageIDs: [body.messageid] } });
    expect(failed[0].error).toBe(row.error);
  }, 60_000);

  it('should fail a send the server never acks, with the reason and its messages_update event', async () => {
    await connected();
    await stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'lost', device: phone });
    const { body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'nunca confirmada' } });
    const [row] = await waitFor(
      () => rows([body.messageid]),
      (list) => list.length === 1 && settled(list[0].status),
      60_000,
      'the never-acked send settled',
    );
    expect(row.status).toBe('Failed');
    expect(row.error).toMatch(/did not acknowledge/);
    const events = (await stack.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages_update' ORDER BY id DESC LIMIT 20`,
      [instanceId],
    )) as Array<{ payload: Record<string, any> }>;
    expect(events.some((event) => JSON.stringify(event.payload).includes(body.messageid) && JSON.stringify(event.payload).includes('Failed'))).toBe(true);
  }, 90_000);
});
