import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * Every messages_update, whoever writes it (the worker for receipts and edits, the gateway for pin,
 * unpin and delete), has one shape: the contract's keys, "True"/"False" strings and string seconds.
 */
describe('messages_update shapes (HTTP and simulated phone → outbox)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let contact: string;

  const updates = async (messageId: string) => {
    const rows: Array<{ payload: Record<string, any> }> = await stack.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE event_type = 'messages_update' AND payload->'event'->'MessageIDs' ? $1 ORDER BY id`,
      [messageId],
    );
    return rows.map((row) => row.payload);
  };
  const sendText = async (text: string) => (await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text } })).body;
  const expectShape = (payload: Record<string, any>, type: string, state: string, messageId: string) => {
    expect(payload).toEqual({
      EventType: 'messages_update',
      type,
      state,
      event: {
        MessageIDs: [messageId],
        Chat: `${contact}@s.whatsapp.net`,
        Sender: expect.any(String),
        sender_pn: expect.any(String),
        sender_lid: expect.any(String),
        IsFromMe: 'True',
        IsGroup: 'False',
        Timestamp: expect.stringMatching(/^\d{10}$/),
        Type: state,
      },
      instanceName: 'shapes',
      owner,
    });
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('shapes'));
    contact = nextPhone('5561');
    await stack.control('POST', '/sim/accounts', { phone: contact });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should give a read receipt, Pinned, Unpinned, Edited and Deleted the same shape', async () => {
    const sent = await sendText('shape me');
    await waitFor(
      () => stack.inbox(contact, 1_000),
      (inbox) => inbox.some((entry) => entry.id === sent.messageid),
      10_000,
      'delivery to the phone',
    );
    await stack.control('POST', `/sim/accounts/${contact}/receipts`, { chat: owner, ids: [sent.messageid], type: 'read' });
    expect((await stack.gw.call('POST', '/message/pin', { token, body: { id: sent.messageid, duration: 7 } })).status).toBe(200);
    expect((await stack.gw.call('POST', '/message/pin', { token, body: { id: sent.messageid, pin: false } })).status).toBe(200);
    expect((await stack.gw.call('POST', '/message/edit', { token, body: { id: sent.messageid, text: 'shaped' } })).status).toBe(200);
    expect((await stack.gw.call('POST', '/message/delete', { token, body: { id: sent.messageid } })).status).toBe(200);

    const kinds = ['Read', 'Pinned', 'Unpinned', 'Edited', 'Deleted'];
    const payloads = await waitFor(
      () => updates(sent.messageid),
      (list) => kinds.every((state) => list.some((payload) => payload.state === state)),
      20_000,
      'every messages_update kind',
    );
    for (const state of kinds) {
      const payload = payloads.find((entry) => entry.state === state)!;
      expectShape(payload, state === 'Read' ? 'ReadReceipt' : state, state, sent.messageid);
    }
  });
});
