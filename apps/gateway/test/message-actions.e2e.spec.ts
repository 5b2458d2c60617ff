import { nextPhone, Stack, waitFor } from './support/stack';

/** Actions on stored messages, through the whole stack; the simulated phone decodes each one. */
describe('message actions (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let contact: string;

  const received = (messageId: string) => stack.received(contact, messageId);
  const sendText = async (text: string) => (await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text } })).body;
  const updates = async (type: string) => {
    const rows: Array<{ payload: Record<string, any> }> = await stack.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE event_type = 'messages_update' AND payload->>'type' = $1 ORDER BY id`,
      [type],
    );
    return rows.map((row) => row.payload);
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('actions'));
    contact = nextPhone('5551');
    await stack.control('POST', '/sim/accounts', { phone: contact });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should react to a message and remove the reaction', async () => {
    const original = await sendText('react to me');
    const { status, body } = await stack.gw.call('POST', '/message/react', {
      token,
      body: { number: contact, text: '👍', id: `${owner}:${original.messageid}` },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ messageType: 'reaction', owner, reaction: original.messageid });
    expect((await received(body.messageid)).message.reactionMessage).toMatchObject({ text: '👍', key: { id: original.messageid } });
    const removed = await stack.gw.call('POST', '/message/react', { token, body: { number: contact, text: '', id: original.id } });
    expect(removed.status).toBe(200);
  });

  it('should edit a sent message and record it', async () => {
    const original = await sendText('typo');
    const { status, body } = await stack.gw.call('POST', '/message/edit', { token, body: { id: original.messageid, text: 'fixed' } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: original.id, messageid: original.messageid, owner });
    const found = await stack.gw.call('POST', '/message/find', { token, body: { id: original.messageid } });
    // `edited` names the edit (a message id; see message-edits.e2e.spec.ts); its event comes from the worker.
    expect(found.body.messages[0]).toMatchObject({ text: 'fixed', edited: expect.stringMatching(/^3EB0[0-9A-F]+$/) });
    await waitFor(
      () => updates('Edited'),
      (payloads) => payloads.some((payload) => payload.event.MessageIDs[0] === original.messageid),
      10_000,
      'Edited event',
    );
  });

  it('should delete for everyone and mark the original Deleted', async () => {
    const original = await sendText('oops');
    const { status, body } = await stack.gw.call('POST', '/message/delete', { token, body: { id: original.id } });
    expect(status).toBe(200);
    expect(body).toEqual({ timestamp: expect.any(Number), id: original.id });
    const found = await stack.gw.call('POST', '/message/find', { token, body: { id: original.id } });
    expect(found.body.messages[0].status).toBe('Deleted');
    expect((await updates('Deleted')).some((payload) => payload.event.MessageIDs[0] === original.messageid)).toBe(true);
  });

  describe('POST /message/pin', () => {
    it('should pin for 7 days, answer the PinInChatMessage record, and emit Pinned', async () => {
      const original = await sendText('pin me');
      const { status, body } = await stack.gw.call('POST', '/message/pin', { token, body: { id: original.messageid, duration: 7 } });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        messageType: 'PinInChatMessage',
        targetMessageID: original.messageid,
        pinned: true,
        owner,
        chatid: `${contact}@s.whatsapp.net`,
      });
      expect(body.id).toBe(`${owner}:${body.messageid}`);
      const pin = (await received(body.messageid)).message.pinInChatMessage;
      expect(pin).toMatchObject({ key: { id: original.messageid }, type: 'PIN_FOR_ALL' });
      const context = (await received(body.messageid)).message.messageContextInfo;
      expect(context?.messageAddOnDurationInSecs).toBe(7 * 86_400);
      expect((await stack.gw.call('POST', '/message/find', { token, body: { id: original.id } })).body.messages[0].pinned).toBe(true);
      expect((await updates('Pinned')).length).toBeGreaterThan(0);
    });

    it('should default an unknown duration to 30 days and unpin', async () => {
      const original = await sendText('pin me too');
      const pinned = await stack.gw.call('POST', '/message/pin', { token, body: { id: original.id, duration: 3 } });
      expect((await received(pinned.body.messageid)).message.messageContextInfo?.messageAddOnDurationInSecs).toBe(30 * 86_400);
      const unpinned = await stack.gw.call('POST', '/message/pin', { token, body: { id: original.id, pin: false, duration: 7 } });
      expect(unpinned.body).toMatchObject({ pinned: false, targetMessageID: original.messageid });
      expect((await received(unpinned.body.messageid)).message.pinInChatMessage).toMatchObject({ type: 'UNPIN_FOR_ALL' });
      expect((await updates('Unpinned')).length).toBeGreaterThan(0);
    });

    it('should answer Message not found and refuse newsletters', async () => {
      expect(await stack.gw.call('POST', '/message/pin', { token, body: { id: 'NOPE' } })).toEqual({ status: 404, body: { error: 'Message not found' } });
      expect((await stack.gw.call('POST', '/message/pin', { token, body: {} })).status).toBe(400);
      await stack.db.dataSource.query(
        `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp) SELECT id, 'rnews01', 'NEWS1', '120363000000000001@newsletter', 1 FROM instances WHERE token = $1`,
        [token],
      );
      expect(await stack.gw.call('POST', '/message/pin', { token, body: { id: 'NEWS1' } })).toEqual({
        status: 400,
        body: { error: 'message pinning not supported for newsletters' },
      });
    });
  });

  it('should report unknown ids in /message/markread', async () => {
    const { status, body } = await stack.gw.call('POST', '/message/markread', { token, body: { id: ['NOPE'] } });
    expect(status).toBe(200);
    expect(body.results).toEqual([{ message_id: 'NOPE', status: 'error', error: 'Message not found' }]);
    expect((await stack.gw.call('POST', '/message/markread', { token, body: { id: [] } })).status).toBe(400);
  });
});
