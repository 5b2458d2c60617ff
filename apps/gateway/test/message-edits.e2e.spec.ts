import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * An edit is recorded one way whether it was made through the API or on the contact's phone: the edit
 * is a message of its own whose `edited` names the original (as the captures
 * messages/*-chat/*\/text.edited.json show), the original takes the new text with `edited` naming the
 * edit, and one messages_update `Edited` announces the original's change.
 */
describe('edits (API and network alike)', () => {
  const stack = new Stack();
  let token: string;
  let ownPhone: string;
  let contact: string;

  const events = async (type: string) =>
    (await stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = $1 ORDER BY id`, [type])).map(
      (row: { payload: Record<string, any> }) => row.payload,
    ) as Array<Record<string, any>>;
  const find = async (id: string) => (await stack.gw.call('POST', '/message/find', { token, body: { id } })).body.messages[0];
  /** The `messages` event of the edit (written in the same transaction as the original's `Edited`). */
  const editAnnounced = (originalId: string) =>
    waitFor(
      () => events('messages'),
      (payloads) => payloads.some((payload) => payload.message.edited === originalId),
      15_000,
      `the edit of ${originalId}`,
    ).then((payloads) => payloads.find((payload) => payload.message.edited === originalId)!.message);

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: ownPhone } = await stack.connectedInstance('edits'));
    contact = nextPhone('5561');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
  }, 60_000);
  afterAll(() => stack.stop());

  const expectRecorded = async (originalId: string, text: string, fromMe: boolean) => {
    const edit = await editAnnounced(originalId);
    expect(edit).toMatchObject({ edited: originalId, text, fromMe });
    expect(edit.messageid).not.toBe(originalId);
    expect(await find(originalId)).toMatchObject({ messageid: originalId, text, edited: edit.messageid });
    const updates = (await events('messages_update')).filter((payload) => payload.type === 'Edited' && payload.event.MessageIDs.includes(originalId));
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      state: 'Edited',
      event: { MessageIDs: [originalId], Type: 'Edited', IsFromMe: fromMe ? 'True' : 'False', IsGroup: 'False', Timestamp: expect.stringMatching(/^\d+$/) },
    });
  };

  it('an edit through /message/edit', async () => {
    const original = (await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'typo' } })).body;
    const { status } = await stack.gw.call('POST', '/message/edit', { token, body: { id: original.id, text: 'fixed' } });
    expect(status).toBe(200);
    await expectRecorded(original.messageid, 'fixed', true);
    // The phone got the edit of that message.
    const inbox = await waitFor(
      () => stack.inbox(contact, 1_000),
      (entries) => entries.some((entry) => entry.message.protocolMessage?.key?.id === original.messageid),
      15_000,
      'edit at the phone',
    );
    expect(inbox.find((entry) => entry.message.protocolMessage?.key?.id === original.messageid)!.message.protocolMessage.editedMessage).toBeDefined();
  });

  it('an edit made on the contact phone', async () => {
    const { id } = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, { to: ownPhone, text: 'helo' });
    await waitFor(
      () => stack.db.dataSource.query(`SELECT 1 FROM messages WHERE message_id = $1`, [id]),
      (rows: unknown[]) => rows.length === 1,
      15_000,
      'original stored',
    );
    await stack.control('POST', `/sim/accounts/${contact}/send`, {
      to: ownPhone,
      message: { protocolMessage: { type: 14, key: { remoteJid: `${ownPhone}@s.whatsapp.net`, fromMe: true, id }, editedMessage: { conversation: 'hello' } } },
    });
    await expectRecorded(id, 'hello', false);
  });
});
