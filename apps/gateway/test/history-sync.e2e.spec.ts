import { nextPhone, Stack, waitFor } from './support/stack';

type PeerRequest = { id: string; type: string; request: Record<string, any>; answered: string[] };

/**
 * `POST /message/history-sync`: the worker asks the phone (a peer data operation); the simulated
 * phone answers from the older messages it keeps; what arrives is stored and announced.
 */
describe('POST /message/history-sync (HTTP → worker → Baileys → phone → history events)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let friend: { phone: string; jid: string; lid: string };
  let anchorId: string;
  const base = Math.floor(Date.now() / 1000) - 20 * 86_400;

  const historyEvents = () =>
    stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'history' ORDER BY id`) as Promise<Array<{ payload: Record<string, any> }>>;
  const find = async (id: string) => (await stack.gw.call('POST', '/message/find', { token, body: { id } })).body.messages[0];
  const peerRequest = async (requestId: string) =>
    (
      await waitFor(
        () => stack.control<PeerRequest[]>('GET', `/sim/accounts/${phone}/peer-requests`),
        (list) => list.some((entry) => entry.id === requestId),
        15_000,
        `peer request ${requestId}`,
      )
    ).find((entry) => entry.id === requestId)!;

  beforeAll(async () => {
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('history-sync'));
    friend = { phone: nextPhone('5591'), jid: '', lid: '' };
    const created = await stack.control<{ jid: string; lid: string }>('POST', '/sim/accounts', { phone: friend.phone, name: 'Ana' });
    Object.assign(friend, created);
    // A message from the friend: the newest one the instance stores for the chat.
    anchorId = (await stack.control<{ id: string }>('POST', `/sim/accounts/${friend.phone}/send`, { to: phone, text: 'oi, tudo bem?' })).id;
    await waitFor(
      () => find(anchorId),
      (message) => !!message,
      15_000,
      'the received message stored',
    );
    // What the instance's phone keeps of the chat beyond that (never pushed to the companion).
    const archived = (id: string, offset: number, text: string, fromMe = false) => ({
      key: { remoteJid: friend.lid, fromMe, id },
      message: { conversation: text },
      messageTimestamp: base + offset,
    });
    await stack.control('POST', `/sim/accounts/${phone}/archive`, {
      messages: [
        archived('HS-OLD1', 10, 'primeira'),
        archived('HS-OLD2', 20, 'segunda', true),
        archived('HS-OLD3', 30, 'terceira'),
        archived('HS-LOST', 20 * 86_400 + 3_600, 'perdida'),
      ],
    });
  }, 90_000);

  afterAll(() => stack.stop());

  it('should ask for the messages before the oldest stored one, store them and announce them in a history event', async () => {
    const { status, body } = await stack.gw.call('POST', '/message/history-sync', { token, body: { number: friend.jid, count: 2 } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, mode: 'history', message: 'History sync request sent. Messages will be received as history sync events.' });
    expect(body.details).toMatchObject({ chatid: friend.jid, anchor_messageid: anchorId, count: 2 });

    const asked = await peerRequest(body.details.request_id);
    expect(asked).toMatchObject({ type: 'HISTORY_SYNC_ON_DEMAND', answered: ['HS-OLD2', 'HS-OLD3'] });
    expect(asked.request.historySyncOnDemandRequest).toMatchObject({ oldestMsgId: anchorId, onDemandMsgCount: 2 });

    const events = await waitFor(
      historyEvents,
      (rows) => rows.some((row) => row.payload.messages?.some((message: { messageid: string }) => message.messageid === 'HS-OLD3')),
      20_000,
      'history event',
    );
    const event = events.find((row) => row.payload.messages?.some((message: { messageid: string }) => message.messageid === 'HS-OLD3'))!.payload;
    expect(event.messages.map((message: { messageid: string }) => message.messageid).sort()).toEqual(['HS-OLD2', 'HS-OLD3']);
    // The event names the request it answers (the id history-sync answered), not the pairing's.
    expect(event.request_id).toBe(body.details.request_id);
    expect(await find('HS-OLD2')).toMatchObject({ chatid: friend.jid, text: 'segunda', fromMe: true });
    expect(await find('HS-OLD1')).toBeUndefined();
  });

  it('should go on from the new oldest message, or from an explicit messageid', async () => {
    const next = await stack.gw.call('POST', '/message/history-sync', { token, body: { number: friend.phone, count: 10 } });
    expect(next.status).toBe(200);
    expect(next.body.details.anchor_messageid).toBe('HS-OLD2');
    expect((await peerRequest(next.body.details.request_id)).answered).toEqual(['HS-OLD1']);
    await waitFor(
      () => find('HS-OLD1'),
      (message) => message?.text === 'primeira',
      20_000,
      'HS-OLD1 stored',
    );

    const explicit = await stack.gw.call('POST', '/message/history-sync', {
      token,
      body: { number: friend.jid, mode: 'history', messageid: 'HS-OLD3', count: 1 },
    });
    expect(explicit.status).toBe(200);
    expect((await peerRequest(explicit.body.details.request_id)).answered).toEqual(['HS-OLD2']);
  });

  it('should reload one exact message (mode=exact) even when it is not stored', async () => {
    expect(await find('HS-LOST')).toBeUndefined();
    const { status, body } = await stack.gw.call('POST', '/message/history-sync', { token, body: { number: friend.jid, mode: 'exact', messageid: 'HS-LOST' } });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: true,
      mode: 'exact',
      message: 'Exact message reload request sent. The message will be received if available.',
      details: { messageid: 'HS-LOST', known_locally: false },
    });
    expect(await peerRequest(body.details.request_id)).toMatchObject({ type: 'PLACEHOLDER_MESSAGE_RESEND', answered: ['HS-LOST'] });
    expect(
      await waitFor(
        () => find('HS-LOST'),
        (message) => !!message,
        20_000,
        'HS-LOST stored',
      ),
    ).toMatchObject({ text: 'perdida', chatid: friend.jid });
    // Announced as what the request brought (a history event with its request_id), not as a new message.
    const events = await waitFor(
      historyEvents,
      (rows) => rows.some((row) => row.payload.request_id === body.details.request_id),
      20_000,
      'history event of the reload',
    );
    const event = events.find((row) => row.payload.request_id === body.details.request_id)!.payload;
    expect(event).toMatchObject({ EventType: 'history', syncType: '6', counts: { messages: 1 } });
    expect(event.messages).toEqual([expect.objectContaining({ messageid: 'HS-LOST', text: 'perdida', chatid: friend.jid })]);
    const announced: Array<{ n: number }> = await stack.db.dataSource.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'messages' AND payload->'message'->>'messageid' = 'HS-LOST'`,
    );
    expect(announced[0].n).toBe(0);

    // Asked again, now that it is stored: the event still names it (and nothing is stored twice).
    const again = await stack.gw.call('POST', '/message/history-sync', { token, body: { number: friend.jid, mode: 'exact', messageid: 'HS-LOST' } });
    expect(again.body.details).toMatchObject({ known_locally: true });
    expect(again.body.details.request_id).not.toBe(body.details.request_id);
    const rows = await waitFor(
      historyEvents,
      (list) => list.some((row) => row.payload.request_id === again.body.details.request_id),
      20_000,
      'history event of the second reload',
    );
    expect(rows.find((row) => row.payload.request_id === again.body.details.request_id)!.payload.messages).toEqual([
      expect.objectContaining({ messageid: 'HS-LOST', text: 'perdida' }),
    ]);
    const stored: Array<{ n: number }> = await stack.db.dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE message_id = 'HS-LOST'`);
    expect(stored[0].n).toBe(1);
  });

  it('should answer 400 with the reason for bad input', async () => {
    const bad = (body: Record<string, unknown>) => stack.gw.call('POST', '/message/history-sync', { token, body });
    expect(await bad({})).toEqual({ status: 400, body: { error: 'number is required' } });
    expect((await bad({ number: 'abc' })).status).toBe(400);
    expect(await bad({ number: friend.jid, mode: 'all' })).toEqual({ status: 400, body: { error: 'mode must be history or exact' } });
    expect(await bad({ number: friend.jid, count: 0 })).toEqual({ status: 400, body: { error: 'count must be an integer from 1 to 100' } });
    expect(await bad({ number: friend.jid, count: 101 })).toEqual({ status: 400, body: { error: 'count must be an integer from 1 to 100' } });
    expect(await bad({ number: friend.jid, mode: 'exact' })).toEqual({ status: 400, body: { error: 'messageid is required for mode=exact' } });
    expect((await bad({ number: friend.jid, messageid: 'NOT-STORED' })).body.error).toMatch(/^messageid: no message with that id/);
    expect((await bad({ number: nextPhone('5592') })).body.error).toBe('no message of this chat is stored to start from: give messageid');
    expect((await bad({ number: '120363000000000000@newsletter' })).status).toBe(400);
  });
});
